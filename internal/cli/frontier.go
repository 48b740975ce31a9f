package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// frontierCommands are the subcommands of `courtesy frontier`, after the
// URLFrontier Java client's.
var frontierCommands = []struct{ name, synopsis string }{
	{"nodes", "list the nodes of the frontier"},
	{"crawls", "list the crawl IDs"},
	{"queues", "[--include-inactive] [--start N] [--size N]: list the queues of a crawl"},
	{"stats", "[--key K]: statistics of a crawl or queue"},
	{"get", "[--key K] [--max-queues N] [--max-urls N] [--lease SECONDS]: lease URLs due now"},
	{"put", "-f FILE: put URLItems from JSON Lines (protobuf JSON; - is stdin)"},
	{"dump", "-o FILE [--key K]: write every URL as JSON Lines of URLItem (all crawls unless --crawl)"},
	{"list", "[--key K] [--start N] [--size N] [--filter S] [--ignore-case]: list URLs as JSON Lines"},
	{"status", "URL [--key K]: the state of one URL"},
	{"count", "[--key K] [--filter S] [--ignore-case]: count URLs"},
	{"set-delay", "[--key K] SECONDS: delay of a queue, or the default without --key"},
	{"block", "--key K TIME: block a queue until TIME (epoch seconds or RFC 3339; 0 unblocks)"},
	{"crawl-limit", "--key K N: completed URLs after which a queue is no longer served (0: none)"},
	{"active", "[on|off]: show, pause or resume serving URLs"},
	{"delete-queue", "--key K: delete a queue"},
	{"delete-crawl", "delete the crawl named by --crawl"},
	{"purge", "--days N [--key K]: delete URLs created more than N days ago"},
	{"log-level", "PACKAGE LEVEL: set a package's log level (TRACE DEBUG INFO WARN ERROR)"},
}

// runFrontier is the URLFrontier client.
func runFrontier(ctx context.Context, env *Env, args []string) error {
	var b strings.Builder
	b.WriteString("A client of any URLFrontier 2.x service ('courtesy serve' or another).\n\nCommands:\n")
	for _, c := range frontierCommands {
		fmt.Fprintf(&b, "  %-13s %s\n", c.name, c.synopsis)
	}
	fs := newFlagSet(env, "frontier", "COMMAND [flags] [args]", b.String())
	var addr, crawl string
	var timeout time.Duration
	fs.StringVar(&addr, "address", "127.0.0.1:7071", "the service's `ADDR` (host:port)")
	fs.StringVar(&crawl, "crawl", "", "crawl `ID` (default DEFAULT; dump: every crawl)")
	fs.DurationVar(&timeout, "timeout", 0, "give up after this long (0: unary calls 30s, streams none)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("a command is required")
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	known := false
	for _, c := range frontierCommands {
		known = known || c.name == name
	}
	if !known {
		return usagef("unknown command %q", name)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		return usagef("--address %q: %v", addr, err)
	}
	defer conn.Close()
	fc := &frontierClient{env: env, c: pb.NewURLFrontierClient(conn), crawl: crawl, timeout: timeout}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := fc.run(ctx, name, rest); err != nil {
		var ue *usageError
		if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

type frontierClient struct {
	env     *Env
	c       pb.URLFrontierClient
	crawl   string
	timeout time.Duration
}

// unary bounds a unary call.
func (fc *frontierClient) unary(ctx context.Context) (context.Context, context.CancelFunc) {
	if fc.timeout > 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, 30*time.Second)
}

// sub holds one command's own flags.
type sub struct {
	fs                         *flag.FlagSet
	key, filter, file, out     string
	start, size, maxQ, maxU    uint
	lease, days                uint
	inactive, ignoreCase       bool
	hasKey, hasFilter, hasCase bool
}

func (fc *frontierClient) parseSub(name string, args []string, flags ...string) (*sub, error) {
	s := &sub{fs: newFlagSet(fc.env, "frontier "+name, "", "")}
	s.fs.StringVar(&fc.crawl, "crawl", fc.crawl, "crawl `ID` (as before the command)")
	for _, f := range flags {
		switch f {
		case "key":
			s.fs.StringVar(&s.key, "key", "", "queue `KEY`")
		case "filter":
			s.fs.StringVar(&s.filter, "filter", "", "keep URLs containing `S`")
			s.fs.BoolVar(&s.ignoreCase, "ignore-case", false, "filter without case")
		case "page":
			s.fs.UintVar(&s.start, "start", 0, "skip `N` entries")
			s.fs.UintVar(&s.size, "size", 0, "at most `N` entries (0: the server's default, 100)")
		case "inactive":
			s.fs.BoolVar(&s.inactive, "include-inactive", false, "include blocked and empty queues")
		case "get":
			s.fs.UintVar(&s.maxQ, "max-queues", 0, "at most `N` queues (0: no limit)")
			s.fs.UintVar(&s.maxU, "max-urls", 0, "at most `N` URLs per queue (0: no limit)")
			s.fs.UintVar(&s.lease, "lease", 0, "lease `SECONDS` (0: the server's default)")
		case "file":
			s.fs.StringVar(&s.file, "f", "", "read `FILE` (- is stdin)")
		case "out":
			s.fs.StringVar(&s.out, "o", "", "write `FILE` (- is stdout)")
		case "days":
			s.fs.UintVar(&s.days, "days", 0, "created more than `N` days ago")
		}
	}
	if err := parseFlags(fc.env, s.fs, args); err != nil {
		return nil, err
	}
	set := flagsSet(s.fs)
	s.hasKey, s.hasFilter, s.hasCase = set["key"], set["filter"], set["ignore-case"]
	return s, nil
}

func (fc *frontierClient) run(ctx context.Context, name string, args []string) error {
	out := fc.env.Stdout
	uctx, cancel := fc.unary(ctx)
	defer cancel()
	switch name {
	case "nodes", "crawls":
		if _, err := fc.parseSub(name, args); err != nil {
			return err
		}
		var l *pb.StringList
		var err error
		if name == "nodes" {
			l, err = fc.c.ListNodes(uctx, &pb.Empty{})
		} else {
			l, err = fc.c.ListCrawls(uctx, &pb.Local{})
		}
		if err != nil {
			return err
		}
		for _, v := range l.GetValues() {
			fmt.Fprintln(out, v)
		}
	case "queues":
		s, err := fc.parseSub(name, args, "page", "inactive")
		if err != nil {
			return err
		}
		ql, err := fc.c.ListQueues(uctx, &pb.Pagination{Start: uint32(s.start), Size: uint32(s.size), IncludeInactive: s.inactive, CrawlID: fc.crawl})
		if err != nil {
			return err
		}
		for _, v := range ql.GetValues() {
			fmt.Fprintln(out, v)
		}
		fmt.Fprintf(fc.env.Stderr, "%d of %d queues from %d (crawl %s)\n", ql.GetSize(), ql.GetTotal(), ql.GetStart(), ql.GetCrawlID())
	case "stats":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		st, err := fc.c.GetStats(uctx, &pb.QueueWithinCrawlParams{Key: s.key, CrawlID: fc.crawl})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "crawl\t%s\nsize\t%d\nin_process\t%d\nqueues\t%d\n", st.GetCrawlID(), st.GetSize(), st.GetInProcess(), st.GetNumberOfQueues())
		keys := make([]string, 0, len(st.GetCounts()))
		for k := range st.GetCounts() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(out, "%s\t%d\n", k, st.GetCounts()[k])
		}
	case "get":
		s, err := fc.parseSub(name, args, "key", "get")
		if err != nil {
			return err
		}
		p := &pb.GetParams{Key: s.key, MaxQueues: uint32(s.maxQ), MaxUrlsPerQueue: uint32(s.maxU), DelayRequestable: uint32(s.lease)}
		if fc.crawl != "" || s.key != "" {
			p.Item = &pb.GetParams_CrawlID{CrawlID: fc.crawl}
		} else {
			p.Item = &pb.GetParams_AnyCrawlID{AnyCrawlID: &pb.AnyCrawlID{}}
		}
		st, err := fc.c.GetURLs(ctx, p)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(out)
		defer w.Flush()
		for {
			u, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", u.GetUrl(), u.GetKey(), u.GetCrawlID())
		}
	case "put":
		s, err := fc.parseSub(name, args, "file")
		if err != nil {
			return err
		}
		if s.file == "" {
			return usagef("put needs -f FILE")
		}
		return fc.put(ctx, s.file)
	case "dump", "list":
		flags := []string{"key", "out"}
		if name == "list" {
			flags = []string{"key", "page", "filter"}
		}
		s, err := fc.parseSub(name, args, flags...)
		if err != nil {
			return err
		}
		if name == "dump" && s.out == "" {
			return usagef("dump needs -o FILE")
		}
		return fc.dump(ctx, name, s)
	case "status":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		if s.fs.NArg() != 1 {
			return usagef("status needs one URL")
		}
		it, err := fc.c.GetURLStatus(uctx, &pb.URLStatusRequest{Url: s.fs.Arg(0), Key: s.key, CrawlID: fc.crawl})
		if err != nil {
			return err
		}
		b, err := marshalLine(it)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
	case "count":
		s, err := fc.parseSub(name, args, "key", "filter")
		if err != nil {
			return err
		}
		p := &pb.CountUrlParams{Key: s.key, CrawlID: fc.crawl}
		if s.hasFilter {
			p.Filter = &s.filter
		}
		if s.hasCase {
			p.IgnoreCase = &s.ignoreCase
		}
		n, err := fc.c.CountURLs(uctx, p)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, n.GetValue())
	case "set-delay":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		secs, err := oneUint(s.fs, "SECONDS")
		if err != nil {
			return err
		}
		_, err = fc.c.SetDelay(uctx, &pb.QueueDelayParams{Key: s.key, DelayRequestable: uint32(min(secs, 1<<32-1)), CrawlID: fc.crawl})
		return err
	case "block":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		if s.key == "" || s.fs.NArg() != 1 {
			return usagef("block needs --key K and a TIME")
		}
		t, err := parseEpoch(s.fs.Arg(0))
		if err != nil {
			return err
		}
		_, err = fc.c.BlockQueueUntil(uctx, &pb.BlockQueueParams{Key: s.key, Time: t, CrawlID: fc.crawl})
		return err
	case "crawl-limit":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		n, err := oneUint(s.fs, "N")
		if err != nil {
			return err
		}
		if s.key == "" {
			return usagef("crawl-limit needs --key K")
		}
		_, err = fc.c.SetCrawlLimit(uctx, &pb.CrawlLimitParams{Key: s.key, Limit: uint32(min(n, 1<<32-1)), CrawlID: fc.crawl})
		return err
	case "active":
		s, err := fc.parseSub(name, args)
		if err != nil {
			return err
		}
		switch s.fs.Arg(0) {
		case "":
			a, err := fc.c.GetActive(uctx, &pb.Local{})
			if err != nil {
				return err
			}
			fmt.Fprintln(out, map[bool]string{true: "on", false: "off"}[a.GetState()])
		case "on", "off":
			_, err := fc.c.SetActive(uctx, &pb.Active{State: s.fs.Arg(0) == "on"})
			return err
		default:
			return usagef("active takes on or off")
		}
	case "delete-queue":
		s, err := fc.parseSub(name, args, "key")
		if err != nil {
			return err
		}
		if s.key == "" {
			return usagef("delete-queue needs --key K")
		}
		n, err := fc.c.DeleteQueue(uctx, &pb.QueueWithinCrawlParams{Key: s.key, CrawlID: fc.crawl})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d URLs removed\n", n.GetValue())
	case "delete-crawl":
		if _, err := fc.parseSub(name, args); err != nil {
			return err
		}
		if fc.crawl == "" {
			return usagef("delete-crawl needs --crawl ID (DEFAULT for the default crawl)")
		}
		n, err := fc.c.DeleteCrawl(uctx, &pb.DeleteCrawlMessage{Value: fc.crawl})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d URLs removed\n", n.GetValue())
	case "purge":
		s, err := fc.parseSub(name, args, "key", "days")
		if err != nil {
			return err
		}
		if !flagsSet(s.fs)["days"] {
			return usagef("purge needs --days N")
		}
		n, err := fc.c.PurgeURLs(uctx, &pb.PurgeUrlParams{Key: s.key, CrawlID: fc.crawl, Days: uint32(min(s.days, 1<<32-1))})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%d URLs purged\n", n.GetValue())
	case "log-level":
		s, err := fc.parseSub(name, args)
		if err != nil {
			return err
		}
		if s.fs.NArg() != 2 {
			return usagef("log-level needs PACKAGE LEVEL")
		}
		lv, ok := pb.LogLevelParams_Level_value[strings.ToUpper(s.fs.Arg(1))]
		if !ok {
			return usagef("level %q: want TRACE, DEBUG, INFO, WARN or ERROR", s.fs.Arg(1))
		}
		_, err = fc.c.SetLogLevel(uctx, &pb.LogLevelParams{Package: s.fs.Arg(0), Level: pb.LogLevelParams_Level(lv)})
		return err
	}
	return nil
}

func oneUint(fs *flag.FlagSet, what string) (uint64, error) {
	if fs.NArg() != 1 {
		return 0, usagef("want one %s", what)
	}
	n, err := strconv.ParseUint(fs.Arg(0), 10, 64)
	if err != nil {
		return 0, usagef("%s %q: %v", what, fs.Arg(0), err)
	}
	return n, nil
}

// parseEpoch reads epoch seconds or an RFC 3339 time.
func parseEpoch(s string) (uint64, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.Unix() < 0 {
		return 0, usagef("time %q: want epoch seconds or RFC 3339", s)
	}
	return uint64(t.Unix()), nil
}

// maxLine bounds one JSON line of put.
const maxLine = 16 << 20

// put sends the URLItems of a JSON Lines file on one PutURLs stream and
// reports the acks.
func (fc *frontierClient) put(ctx context.Context, file string) error {
	var r io.Reader = fc.env.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	// Parse everything first, so a bad line sends nothing.
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var items []*pb.URLItem
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		it := &pb.URLItem{}
		if err := protojson.Unmarshal([]byte(line), it); err != nil {
			return fmt.Errorf("%s:%d: %w", file, n, err)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := fc.c.PutURLs(ctx)
	if err != nil {
		return err
	}
	sendErr := make(chan error, 1)
	go func() {
		for _, it := range items {
			if err := st.Send(it); err != nil {
				sendErr <- err
				return
			}
		}
		sendErr <- st.CloseSend()
	}()
	counts := map[pb.AckMessage_Status]int{}
	for {
		a, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		counts[a.GetStatus()]++
	}
	if err := <-sendErr; err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	fmt.Fprintf(fc.env.Stdout, "%d items: %d OK, %d SKIPPED, %d FAIL\n", len(items), counts[pb.AckMessage_OK], counts[pb.AckMessage_SKIPPED], counts[pb.AckMessage_FAIL])
	if counts[pb.AckMessage_FAIL] > 0 {
		return fmt.Errorf("%d items failed; put them again", counts[pb.AckMessage_FAIL])
	}
	// A service that ends the stream without acking every item may not
	// have stored them.
	if acked := counts[pb.AckMessage_OK] + counts[pb.AckMessage_SKIPPED]; acked < len(items) {
		return fmt.Errorf("%d of %d items not acknowledged; put them again", len(items)-acked, len(items))
	}
	return nil
}

// dump writes URLItems as JSON Lines: dump every URL of every crawl (or of
// --crawl, or one queue), list one page.
func (fc *frontierClient) dump(ctx context.Context, name string, s *sub) error {
	w := fc.env.Stdout
	if name == "dump" && s.out != "-" {
		f, err := os.Create(s.out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriter(w)
	crawls := []string{fc.crawl}
	if name == "dump" && fc.crawl == "" {
		uctx, cancel := fc.unary(ctx)
		l, err := fc.c.ListCrawls(uctx, &pb.Local{})
		cancel()
		if err != nil {
			return err
		}
		crawls = l.GetValues()
	}
	total := 0
	for _, crawl := range crawls {
		p := &pb.ListUrlParams{Key: s.key, CrawlID: crawl, Start: uint32(s.start), Size: uint32(s.size)}
		if name == "dump" {
			p.Start, p.Size = 0, 1<<32-1 // one stream: everything
		}
		if s.hasFilter {
			p.Filter = &s.filter
		}
		if s.hasCase {
			p.IgnoreCase = &s.ignoreCase
		}
		st, err := fc.c.ListURLs(ctx, p)
		if err != nil {
			return err
		}
		for {
			it, err := st.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			b, err := marshalLine(it)
			if err != nil {
				return err
			}
			bw.Write(b)
			bw.WriteByte('\n')
			total++
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if name == "dump" {
		fmt.Fprintf(fc.env.Stderr, "%d URLs written to %s\n", total, s.out)
		if f, ok := w.(*os.File); ok && w != fc.env.Stdout {
			return f.Sync()
		}
	}
	return nil
}

// marshalLine is a message in protobuf's JSON mapping on one line, in a
// stable form (protojson varies its spacing on purpose).
func marshalLine(m *pb.URLItem) ([]byte, error) {
	b, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
