package urlfrontier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// Limits on requests.
const (
	// MaxKeyLength is the longest queue key (URLFrontier: 255).
	MaxKeyLength = frontier.MaxKeyLength
	// MaxCrawlIDLength bounds a crawl ID.
	MaxCrawlIDLength = 255
	// MaxQueuesListed bounds one ListQueues answer whatever its size asks.
	MaxQueuesListed = 100_000
	// DefaultPageSize is the page of ListQueues and ListURLs when size is 0.
	DefaultPageSize = 100
	// maxBlockSeconds clamps BlockQueueUntil times (year 2242) so that
	// they fit a time.Time in nanoseconds.
	maxBlockSeconds = 1 << 33
)

// Options configures a Server. Frontier is required; the zero value of
// every other field works.
type Options struct {
	// Frontier is the embedded frontier (*frontier.Frontier) or a shared
	// one (the Redis Cluster frontier).
	Frontier frontier.API
	// Nodes is what ListNodes returns (this node's host:port); sorted by
	// the caller.
	Nodes []string
	// ListNodes, when set, answers ListNodes instead of Nodes: the live
	// service nodes sharing the frontier, sorted.
	ListNodes func(ctx context.Context) ([]string, error)
	// Levels receives SetLogLevel; nil ignores it (after validation).
	Levels *LogLevels
	// Logger logs the service's events; nil discards them.
	Logger *slog.Logger
	// Metrics records per-RPC metrics; nil records none.
	Metrics *Metrics
	// MaxPutInFlight bounds the PutURLs items read but not yet acked, per
	// stream; 0 means 1,024 (URLFrontier putURLs.max.inflight).
	MaxPutInFlight int
	// MaxBatchesInFlight bounds the PutDiscovered batches read but not yet
	// acked, per stream; 0 means 16 (putDiscovered.max.inflight).
	MaxBatchesInFlight int
	// Now is the clock for PurgeURLs; nil means time.Now.
	Now func() time.Time
}

// Server implements the URLFrontier service over a frontier.API.
type Server struct {
	pb.UnimplementedURLFrontierServer
	f   frontier.API
	o   Options
	log *slog.Logger
}

// NewServer returns the service; register it with pb.RegisterURLFrontierServer
// or use NewGRPCServer.
func NewServer(o Options) (*Server, error) {
	if isNil(o.Frontier) {
		return nil, errors.New("urlfrontier: a frontier is required")
	}
	if o.MaxPutInFlight <= 0 {
		o.MaxPutInFlight = 1024
	}
	if o.MaxBatchesInFlight <= 0 {
		o.MaxBatchesInFlight = 16
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{f: o.Frontier, o: o, log: log}, nil
}

// invalid returns an INVALID_ARGUMENT error.
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, "urlfrontier: "+format, args...)
}

// internal maps a frontier error onto a gRPC status.
func internal(what string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, frontier.ErrNotFound):
		return status.Errorf(codes.NotFound, "urlfrontier: %s: %v", what, err)
	case errors.Is(err, frontier.ErrClosed):
		return status.Errorf(codes.Unavailable, "urlfrontier: %s: %v", what, err)
	}
	return status.Errorf(codes.Internal, "urlfrontier: %s: %v", what, err)
}

// checkKey validates a queue key (required when need is set) and crawl ID
// and returns the normalised crawl ID.
func checkKey(key, crawlID string, need bool) (string, error) {
	if need && key == "" {
		return "", invalid("a queue key is required")
	}
	if len(key) > MaxKeyLength {
		return "", invalid("queue key of %d bytes: at most %d", len(key), MaxKeyLength)
	}
	if len(crawlID) > MaxCrawlIDLength {
		return "", invalid("crawl ID of %d bytes: at most %d", len(crawlID), MaxCrawlIDLength)
	}
	return frontier.NormalizeCrawlID(crawlID), nil
}

// ListNodes returns the service nodes: Options.ListNodes's answer when
// set (the nodes sharing a clustered frontier), else Options.Nodes.
func (s *Server) ListNodes(ctx context.Context, _ *pb.Empty) (*pb.StringList, error) {
	if s.o.ListNodes != nil {
		nodes, err := s.o.ListNodes(ctx)
		if err != nil {
			return nil, internal("list nodes", err)
		}
		return &pb.StringList{Values: nodes}, nil
	}
	return &pb.StringList{Values: append([]string(nil), s.o.Nodes...)}, nil
}

// isNil reports whether f is nil, or an interface holding a nil pointer
// (a nil *frontier.Frontier passed as a frontier.API).
func isNil(f frontier.API) bool {
	if f == nil {
		return true
	}
	v := reflect.ValueOf(f)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ListCrawls returns the crawl IDs, sorted.
func (s *Server) ListCrawls(context.Context, *pb.Local) (*pb.StringList, error) {
	return &pb.StringList{Values: s.f.ListCrawls()}, nil
}

// DeleteCrawl deletes a crawl and returns the URLs not completed it held.
func (s *Server) DeleteCrawl(ctx context.Context, r *pb.DeleteCrawlMessage) (*pb.Long, error) {
	crawl, err := checkKey("", r.GetValue(), false)
	if err != nil {
		return nil, err
	}
	n, err := s.f.DeleteCrawl(ctx, crawl)
	if err != nil {
		return nil, internal("delete crawl", err)
	}
	s.log.Info("crawl deleted", "crawl", crawl, "urls", n)
	return &pb.Long{Value: n}, nil
}

// ListQueues pages over the queue keys of a crawl, in key order.
func (s *Server) ListQueues(ctx context.Context, r *pb.Pagination) (*pb.QueueList, error) {
	crawl, err := checkKey("", r.GetCrawlID(), false)
	if err != nil {
		return nil, err
	}
	size := int(r.GetSize())
	if size == 0 {
		size = DefaultPageSize
	}
	size = min(size, MaxQueuesListed)
	keys, total := s.f.ListQueues(crawl, int(min(r.GetStart(), 1<<31-1)), size, r.GetIncludeInactive())
	return &pb.QueueList{Values: keys, Total: uint64(total), Start: r.GetStart(), Size: uint32(len(keys)), CrawlID: crawl}, nil
}

// GetURLs streams URLs due now and leases them for delay_requestable.
func (s *Server) GetURLs(r *pb.GetParams, stream pb.URLFrontier_GetURLsServer) error {
	p := frontier.GetParams{
		MaxQueues:       int(r.GetMaxQueues()),
		MaxURLsPerQueue: int(r.GetMaxUrlsPerQueue()),
		Key:             r.GetKey(),
		Lease:           time.Duration(r.GetDelayRequestable()) * time.Second,
	}
	switch it := r.GetItem().(type) {
	case *pb.GetParams_CrawlID:
		p.CrawlID = it.CrawlID
	default: // anyCrawlID, or unset
		if p.Key != "" {
			// A key names a queue of one crawl: URLFrontier answers an
			// empty stream when the crawl is not given.
			return nil
		}
		p.AnyCrawl = true
	}
	if _, err := checkKey(p.Key, p.CrawlID, false); err != nil {
		return err
	}
	leases, err := s.f.Get(stream.Context(), p)
	if err != nil {
		return internal("get", err)
	}
	for _, l := range leases {
		if err := stream.Send(&pb.URLInfo{Url: l.URL, Key: l.Key, CrawlID: l.CrawlID, Metadata: toPBMetadata(l.Metadata)}); err != nil {
			return err
		}
	}
	s.o.Metrics.urlsOut("GetURLs", len(leases))
	return nil
}

// GetStats returns the statistics of a crawl or one of its queues.
func (s *Server) GetStats(ctx context.Context, r *pb.QueueWithinCrawlParams) (*pb.Stats, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), false)
	if err != nil {
		return nil, err
	}
	st := s.f.Stats(crawl, r.GetKey())
	return &pb.Stats{
		Size:           st.Size,
		InProcess:      uint32(min(st.InProcess, 1<<32-1)),
		Counts:         st.Counts(),
		NumberOfQueues: st.Queues,
		CrawlID:        st.CrawlID,
	}, nil
}

// DeleteQueue deletes a queue and returns the URLs not completed it held.
func (s *Server) DeleteQueue(ctx context.Context, r *pb.QueueWithinCrawlParams) (*pb.Long, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	n, err := s.f.DeleteQueue(ctx, crawl, r.GetKey())
	if err != nil {
		return nil, internal("delete queue", err)
	}
	s.log.Info("queue deleted", "crawl", crawl, "key", r.GetKey(), "urls", n)
	return &pb.Long{Value: n}, nil
}

// BlockQueueUntil blocks a queue until an epoch second; 0 unblocks.
func (s *Server) BlockQueueUntil(ctx context.Context, r *pb.BlockQueueParams) (*pb.Empty, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	var t time.Time
	if sec := r.GetTime(); sec > 0 {
		t = time.Unix(int64(min(sec, maxBlockSeconds)), 0)
	}
	if err := s.f.BlockQueueUntil(ctx, crawl, r.GetKey(), t); err != nil {
		return nil, internal("block queue", err)
	}
	return &pb.Empty{}, nil
}

// SetActive pauses or resumes serving URLs.
func (s *Server) SetActive(ctx context.Context, r *pb.Active) (*pb.Empty, error) {
	s.f.SetActive(r.GetState())
	s.log.Info("frontier active", "active", r.GetState())
	return &pb.Empty{}, nil
}

// GetActive reports whether URLs are served.
func (s *Server) GetActive(context.Context, *pb.Local) (*pb.Boolean, error) {
	return &pb.Boolean{State: s.f.Active()}, nil
}

// SetDelay sets the delay of a queue, or with no key the default.
func (s *Server) SetDelay(ctx context.Context, r *pb.QueueDelayParams) (*pb.Empty, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), false)
	if err != nil {
		return nil, err
	}
	if err := s.f.SetDelay(ctx, crawl, r.GetKey(), time.Duration(r.GetDelayRequestable())*time.Second); err != nil {
		return nil, internal("set delay", err)
	}
	return &pb.Empty{}, nil
}

// SetLogLevel sets a package's log level.
func (s *Server) SetLogLevel(ctx context.Context, r *pb.LogLevelParams) (*pb.Empty, error) {
	var level slog.Level
	switch r.GetLevel() {
	case pb.LogLevelParams_TRACE:
		level = LevelTrace
	case pb.LogLevelParams_DEBUG:
		level = slog.LevelDebug
	case pb.LogLevelParams_INFO:
		level = slog.LevelInfo
	case pb.LogLevelParams_WARN:
		level = slog.LevelWarn
	case pb.LogLevelParams_ERROR:
		level = slog.LevelError
	default:
		return nil, invalid("unknown log level %d", r.GetLevel())
	}
	if len(r.GetPackage()) > 255 {
		return nil, invalid("package name of %d bytes: at most 255", len(r.GetPackage()))
	}
	if s.o.Levels != nil && !s.o.Levels.Set(r.GetPackage(), level) {
		return nil, status.Errorf(codes.ResourceExhausted, "urlfrontier: more than %d packages named", maxPackages)
	}
	s.log.Info("log level set", "package", r.GetPackage(), "level", level)
	return &pb.Empty{}, nil
}

// SetCrawlLimit sets the completed-URL limit of a queue.
func (s *Server) SetCrawlLimit(ctx context.Context, r *pb.CrawlLimitParams) (*pb.Empty, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	if err := s.f.SetCrawlLimit(ctx, crawl, r.GetKey(), uint64(r.GetLimit())); err != nil {
		if errors.Is(err, frontier.ErrNotFound) {
			return nil, status.Error(codes.NotFound, "urlfrontier: CrawlId and Queue combination is not found.")
		}
		return nil, internal("set crawl limit", err)
	}
	return &pb.Empty{}, nil
}

// GetURLStatus returns one URL's state, NOT_FOUND for unknown URLs.
func (s *Server) GetURLStatus(ctx context.Context, r *pb.URLStatusRequest) (*pb.URLItem, error) {
	if r.GetUrl() == "" {
		return nil, invalid("a URL is required")
	}
	key := r.GetKey()
	if key == "" {
		key = frontier.DefaultKey(r.GetUrl())
		if key == "" {
			return nil, invalid("no queue key can be derived from %q", truncate(r.GetUrl()))
		}
	}
	crawl, err := checkKey(key, r.GetCrawlID(), true)
	if err != nil {
		return nil, err
	}
	st, err := s.f.Lookup(ctx, crawl, r.GetUrl())
	if errors.Is(err, frontier.ErrNotFound) || (err == nil && st.Key != key) {
		return nil, status.Errorf(codes.NotFound, "urlfrontier: %q not found in queue %q of crawl %q", truncate(r.GetUrl()), key, crawl)
	}
	if err != nil {
		return nil, internal("url status", err)
	}
	e := frontier.URLEntry{URLInfo: frontier.URLInfo{URL: st.URL, Key: st.Key, CrawlID: crawl, Metadata: st.Metadata},
		Completed: st.Completed, RefetchFrom: st.RefetchFrom, Created: st.Created}
	return toPBItem(e), nil
}

// toPBItem is a stored URL as URLFrontier reports it: a known item whose
// refetchable_from_date is 0 when completed, else its due second (its
// creation second when it is due as soon as possible, as URLFrontier sets
// a discovered URL's next fetch date to its discovery time).
func toPBItem(e frontier.URLEntry) *pb.URLItem {
	var due uint64
	if !e.Completed {
		switch {
		case !e.RefetchFrom.IsZero():
			due = uint64(max(e.RefetchFrom.Unix(), 1))
		case !e.Created.IsZero():
			due = uint64(max(e.Created.Unix(), 1))
		default:
			due = 1
		}
	}
	var created uint64
	if !e.Created.IsZero() {
		created = uint64(max(e.Created.Unix(), 0))
	}
	return &pb.URLItem{
		Item: &pb.URLItem_Known{Known: &pb.KnownURLItem{
			Info:                &pb.URLInfo{Url: e.URL, Key: e.Key, CrawlID: e.CrawlID, Metadata: toPBMetadata(e.Metadata)},
			RefetchableFromDate: due,
		}},
		CreationDate: created,
	}
}

// listParams validates what ListURLs and CountURLs select.
func listParams(key, crawlID string, filter *string, ignoreCase *bool) (frontier.ListParams, error) {
	crawl, err := checkKey(key, crawlID, false)
	if err != nil {
		return frontier.ListParams{}, err
	}
	p := frontier.ListParams{CrawlID: crawl, Key: key}
	// A blank filter filters nothing, as upstream (StringUtils.isNotBlank);
	// as a substring it would match no URL.
	if filter != nil && strings.TrimSpace(*filter) != "" {
		p.Filter = *filter
	}
	if ignoreCase != nil {
		p.IgnoreCase = *ignoreCase
	}
	if len(p.Filter) > 8192 {
		return p, invalid("filter of %d bytes: at most 8192", len(p.Filter))
	}
	return p, nil
}

// ListURLs streams the URLs of a crawl or queue, paged and filtered.
func (s *Server) ListURLs(r *pb.ListUrlParams, stream pb.URLFrontier_ListURLsServer) error {
	p, err := listParams(r.GetKey(), r.GetCrawlID(), r.Filter, r.IgnoreCase)
	if err != nil {
		return err
	}
	p.Start, p.Size = int(min(r.GetStart(), 1<<31-1)), int(min(r.GetSize(), 1<<31-1))
	if p.Size == 0 {
		p.Size = DefaultPageSize
	}
	n := 0
	err = s.f.ListURLs(stream.Context(), p, func(e frontier.URLEntry) error {
		n++
		return stream.Send(toPBItem(e))
	})
	s.o.Metrics.urlsOut("ListURLs", n)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return internal("list urls", err)
	}
	return nil
}

// CountURLs counts the URLs of a crawl or queue, filtered.
func (s *Server) CountURLs(ctx context.Context, r *pb.CountUrlParams) (*pb.Long, error) {
	p, err := listParams(r.GetKey(), r.GetCrawlID(), r.Filter, r.IgnoreCase)
	if err != nil {
		return nil, err
	}
	n, err := s.f.CountURLs(ctx, p)
	if err != nil {
		return nil, internal("count urls", err)
	}
	return &pb.Long{Value: n}, nil
}

// PurgeURLs deletes the URLs created more than days ago.
func (s *Server) PurgeURLs(ctx context.Context, r *pb.PurgeUrlParams) (*pb.Long, error) {
	crawl, err := checkKey(r.GetKey(), r.GetCrawlID(), false)
	if err != nil {
		return nil, err
	}
	// In seconds: days as a time.Duration overflows from 106,752 days on
	// and then purged every URL.
	now := s.o.Now()
	before := time.Unix(now.Unix()-int64(r.GetDays())*24*60*60, int64(now.Nanosecond()))
	n, err := s.f.PurgeURLs(ctx, frontier.ListParams{CrawlID: crawl, Key: r.GetKey()}, before)
	if err != nil {
		return nil, internal("purge urls", err)
	}
	s.log.Info("urls purged", "crawl", crawl, "key", r.GetKey(), "days", r.GetDays(), "urls", n)
	return &pb.Long{Value: n}, nil
}

func toPBMetadata(md map[string][]string) map[string]*pb.StringList {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]*pb.StringList, len(md))
	for k, vs := range md {
		out[k] = &pb.StringList{Values: vs}
	}
	return out
}

func fromPBMetadata(md map[string]*pb.StringList) map[string][]string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string][]string, len(md))
	for k, vs := range md {
		out[k] = vs.GetValues()
	}
	return out
}

// toItem converts a URLInfo for the frontier, or reports why it is invalid
// (acked SKIPPED): no URL, a malformed one, no host, a key or crawl ID too
// long.
func toItem(info *pb.URLInfo) (frontier.URLInfo, error) {
	u := info.GetUrl()
	if u == "" {
		return frontier.URLInfo{}, errors.New("no URL")
	}
	pu, err := url.Parse(u)
	if err != nil {
		return frontier.URLInfo{}, fmt.Errorf("malformed URL: %w", err)
	}
	if pu.Host == "" {
		return frontier.URLInfo{}, errors.New("URL without a host")
	}
	key := info.GetKey()
	if key == "" {
		// frontier.DefaultKey, without parsing the URL again.
		if key = strings.ToLower(pu.Hostname()); key == "" {
			return frontier.URLInfo{}, errors.New("URL without a host")
		}
	}
	if len(key) > MaxKeyLength {
		return frontier.URLInfo{}, errors.New("key too long")
	}
	if len(info.GetCrawlID()) > MaxCrawlIDLength {
		return frontier.URLInfo{}, errors.New("crawl ID too long")
	}
	return frontier.URLInfo{URL: u, Key: key, CrawlID: frontier.NormalizeCrawlID(info.GetCrawlID()), Metadata: fromPBMetadata(info.GetMetadata())}, nil
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
