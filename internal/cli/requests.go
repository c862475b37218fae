package cli

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/firestore"
	"github.com/loupe-dev/loupe/internal/marketplace"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// requestView is a feedback request as the requests commands print it.
type requestView struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	Status        string `json:"status"`
	PaymentStatus string `json:"paymentStatus"`
	RequesterID   string `json:"requesterId"`
	RequesterName string `json:"requesterName"`
	MentorID      string `json:"mentorId"`
	MentorName    string `json:"mentorName"`
	CreatedAt     string `json:"createdAt"`
	Comments      *int   `json:"comments,omitempty"`
}

// NewCmdRequests builds `loupe app requests list|get`.
func NewCmdRequests() *cobra.Command {
	var statusFilter, user string
	g := newAdminGroup("requests", "Inspect feedback requests")
	list := g.add(&cobra.Command{Use: "list", Short: "List feedback requests, newest first", Args: noArgs},
		func(ctx context.Context, a *admin, p printer, _ []string) error {
			return requestsList(ctx, a, p, statusFilter, user)
		})
	list.Flags().StringVar(&statusFilter, "status", "", "only requests with this status (pending, accepted, declined, completed, cancelled)")
	list.Flags().StringVar(&user, "user", "", "only requests this user sent or received")
	g.add(&cobra.Command{Use: "get ID", Short: "Show one feedback request", Args: exactArgs(1)}, requestsGet)
	return g.cmd
}

func requestsList(ctx context.Context, a *admin, p printer, statusFilter, user string) error {
	q := a.Firestore.Collection(marketplace.FeedbackRequests).Query
	if statusFilter != "" {
		q = q.Where("status", "==", statusFilter)
	}
	if user != "" {
		q = q.WhereEntity(firestore.OrFilter{Filters: []firestore.EntityFilter{
			firestore.PropertyFilter{Path: "requesterId", Operator: "==", Value: user},
			firestore.PropertyFilter{Path: "mentorId", Operator: "==", Value: user},
		}})
	}
	snaps, err := q.OrderBy("createdAt", firestore.Desc).Documents(ctx).GetAll()
	if err != nil {
		return fmt.Errorf("list requests: %w", err)
	}
	views := []requestView{}
	rows := [][]string{}
	for _, s := range snaps {
		v := requestOf(s)
		views = append(views, v)
		rows = append(rows, []string{v.ID, v.Status, v.RequesterName, v.MentorName, v.Title, v.CreatedAt})
	}
	return p.table([]string{"ID", "STATUS", "REQUESTER", "MENTOR", "TITLE", "CREATED"}, rows, views)
}

func requestsGet(ctx context.Context, a *admin, p printer, args []string) error {
	ref := a.Firestore.Collection(marketplace.FeedbackRequests).Doc(args[0])
	s, err := ref.Get(ctx)
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("request not found: %s", args[0])
	}
	if err != nil {
		return fmt.Errorf("get request: %w", err)
	}
	v := requestOf(s)
	agg, err := ref.Collection(marketplace.Comments).NewAggregationQuery().WithCount("n").Get(ctx)
	if err != nil {
		return fmt.Errorf("count comments: %w", err)
	}
	n := aggregateInt(agg["n"])
	v.Comments = &n
	return p.record([][2]string{
		{"id", v.ID}, {"title", v.Title}, {"status", v.Status}, {"payment", v.PaymentStatus},
		{"requester", v.RequesterName + " (" + v.RequesterID + ")"}, {"mentor", v.MentorName + " (" + v.MentorID + ")"},
		{"created", v.CreatedAt}, {"comments", fmt.Sprint(n)},
	}, v)
}

func requestOf(s *firestore.DocumentSnapshot) requestView {
	d := s.Data()
	str := func(k string) string { v, _ := d[k].(string); return v }
	created := ""
	if t, ok := d["createdAt"].(time.Time); ok {
		created = t.UTC().Format(time.RFC3339)
	}
	return requestView{
		ID: s.Ref.ID, Title: str("title"), Status: str("status"), PaymentStatus: str("paymentStatus"),
		RequesterID: str("requesterId"), RequesterName: str("requesterName"),
		MentorID: str("mentorId"), MentorName: str("mentorName"), CreatedAt: created,
	}
}

// aggregateInt reads a count from an aggregation result.
func aggregateInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case interface{ GetIntegerValue() int64 }:
		return int(n.GetIntegerValue())
	}
	return 0
}
