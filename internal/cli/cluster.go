package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/cluster"
	"github.com/courtesy-crawler/courtesy/internal/frontier"
)

// runCluster dispatches `courtesy cluster status`.
func runCluster(ctx context.Context, env *Env, args []string) error {
	const desc = `Inspect a crawl shared through Redis Cluster.

Subcommands:
  status   list the crawl and serve nodes (live or dead) and the crawl's totals

Run 'courtesy cluster SUBCOMMAND -h' for the flags of a subcommand.`
	if len(args) > 0 && args[0] == "status" {
		return runClusterStatus(ctx, env, args[1:])
	}
	fs := newFlagSet(env, "cluster", "status [flags]", desc)
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("missing subcommand: status")
	}
	return usagef("unknown subcommand %q: want status", fs.Arg(0))
}

func runClusterStatus(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cluster status", "", `Print the nodes of a distributed crawl, from their heartbeats (a node silent
for 5 s is dead), and the totals of its crawls.`)
	addrs := fs.String("redis-cluster", "", "Redis Cluster seed addresses ADDR[,ADDR...], or one plain Redis server (required)")
	crawlID := fs.String("crawl-id", "", "show only this crawl's totals (default: every crawl)")
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if strings.TrimSpace(*addrs) == "" {
		return usagef("--redis-cluster is required")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := cluster.Dial(ctx, []string{*addrs})
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := cluster.NewMembership(c, cluster.MembershipOptions{})
	if err != nil {
		return err
	}
	nodes, err := m.Nodes(ctx)
	if err != nil {
		return err
	}
	f, err := cluster.New(ctx, c, cluster.Options{RetryFor: 5 * time.Second})
	if err != nil {
		return err
	}
	crawls := []string{*crawlID}
	if *crawlID == "" {
		crawls = f.ListCrawls()
	}
	var stats []frontier.Stats
	for _, id := range crawls {
		s, err := f.StatsContext(ctx, id, "")
		if err != nil {
			return err
		}
		stats = append(stats, s)
	}
	if *asJSON {
		type nodeOut struct {
			cluster.NodeInfo
			LastSeen time.Time `json:"last_seen"`
			Dead     bool      `json:"dead"`
		}
		out := struct {
			Nodes  []nodeOut        `json:"nodes"`
			Crawls []frontier.Stats `json:"crawls"`
		}{Crawls: stats}
		for _, n := range nodes {
			out.Nodes = append(out.Nodes, nodeOut{n.NodeInfo, n.LastSeen, n.Dead})
		}
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLE\tSTATE\tHOST\tPID\tVERSION\tCRAWL\tCPU s\tRSS MB\tGOROUTINES\tPAGES/S\tIN FLIGHT\tLAST SEEN\tLAST ERROR")
	for _, n := range nodes {
		state := "live"
		if n.Dead {
			state = "dead"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%.1f\t%.1f\t%d\t%.1f\t%d\t%s\t%s\n",
			n.ID, n.Role, state, n.Host, n.PID, n.Version, n.CrawlID, n.CPUSeconds, float64(n.RSSBytes)/(1<<20),
			n.Goroutines, n.PagesPerSec, n.InFlight, n.LastSeen.UTC().Format(time.RFC3339), oneLine(n.LastError))
	}
	if len(nodes) == 0 {
		fmt.Fprintln(tw, "(no node has sent a heartbeat)")
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "CRAWL\tQUEUED\tIN FLIGHT\tCOMPLETED\tQUEUES\tACTIVE QUEUES\tRETIRED URLS\tRETIRED QUEUES")
	for _, s := range stats {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", s.CrawlID, s.Size, s.InProcess, s.Completed, s.Queues, s.ActiveQueues, s.Retired, s.RetiredQueues)
	}
	if len(stats) == 0 {
		fmt.Fprintln(tw, "(no crawl)")
	}
	return tw.Flush()
}

// oneLine keeps a table cell on one line and short.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
