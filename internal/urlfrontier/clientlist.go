package urlfrontier

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/courtesy-crawler/courtesy/internal/frontier"
	pb "github.com/courtesy-crawler/courtesy/internal/urlfrontier/urlfrontierpb"
)

// The reads and switches a console makes of a remote frontier: its
// queues, a queue's URLs, and whether it serves.

// queuesPage is how many queue keys one ListQueues call asks for.
const queuesPage = 1000

// Queues calls fn with the keys of the crawl's queues, active or not, in
// the service's order (ListQueues, a page at a time), until fn returns
// false or max keys were given (max <= 0: all).
func (c *Client) Queues(ctx context.Context, crawlID string, max int, fn func(key string) bool) error {
	given := 0
	for start := 0; ; start += queuesPage {
		var page []string
		err := c.do(ctx, "ListQueues", func(ctx context.Context) error {
			l, err := c.c.ListQueues(ctx, &pb.Pagination{Start: clampU32(start), Size: queuesPage, IncludeInactive: true, CrawlID: crawlID})
			page = l.GetValues()
			return err
		})
		if err != nil {
			return err
		}
		for _, k := range page {
			if !fn(k) {
				return nil
			}
			if given++; max > 0 && given >= max {
				return nil
			}
		}
		if len(page) < queuesPage {
			return nil
		}
	}
}

// URLs returns up to n URLs of the queue key of the crawl, from the first
// the service lists (ListURLs), completed ones included.
func (c *Client) URLs(ctx context.Context, crawlID, key string, n int) ([]frontier.URLEntry, error) {
	var out []frontier.URLEntry
	err := c.do(ctx, "ListURLs", func(ctx context.Context) error {
		out = out[:0]
		s, err := c.c.ListURLs(ctx, &pb.ListUrlParams{Size: clampU32(n), Key: key, CrawlID: crawlID})
		if err != nil {
			return err
		}
		for {
			item, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			out = append(out, fromPBItem(item))
		}
	})
	return out, err
}

// fromPBItem is the inverse of toPBItem: a known item with no refetch date
// is completed; a discovered one is due now.
func fromPBItem(item *pb.URLItem) frontier.URLEntry {
	var e frontier.URLEntry
	if k := item.GetKnown(); k != nil {
		e.URLInfo = fromWireInfo(k.GetInfo())
		if d := k.GetRefetchableFromDate(); d == 0 {
			e.Completed = true
		} else {
			e.RefetchFrom = time.Unix(int64(min(d, 1<<62)), 0)
		}
	} else {
		e.URLInfo = fromWireInfo(item.GetDiscovered().GetInfo())
	}
	if d := item.GetCreationDate(); d > 0 {
		e.Created = time.Unix(int64(min(d, 1<<62)), 0)
	}
	return e
}

// Active reports whether the service serves URLs (GetActive).
func (c *Client) Active(ctx context.Context) (bool, error) {
	var on bool
	err := c.do(ctx, "GetActive", func(ctx context.Context) error {
		b, err := c.c.GetActive(ctx, &pb.Local{})
		on = b.GetState()
		return err
	})
	return on, err
}

// SetActive starts or stops the serving of URLs on every node of the
// service (SetActive).
func (c *Client) SetActive(ctx context.Context, on bool) error {
	return c.do(ctx, "SetActive", func(ctx context.Context) error {
		_, err := c.c.SetActive(ctx, &pb.Active{State: on})
		return err
	})
}
