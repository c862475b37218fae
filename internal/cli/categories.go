package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/loupe-dev/loupe/internal/marketplace"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// category is categories/{id} (docs/product-spec.md §3).
type category struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Emoji string `json:"emoji,omitempty"`
}

// NewCmdCategories builds `loupe app categories list|add|remove`.
func NewCmdCategories() *cobra.Command {
	var emoji, id string
	g := newAdminGroup("categories", "Manage the categories mentors are listed under")
	g.add(&cobra.Command{Use: "list", Short: "List categories", Args: noArgs}, categoriesList)
	add := g.add(&cobra.Command{Use: "add NAME", Short: "Add a category", Args: exactArgs(1)},
		func(ctx context.Context, a *admin, p printer, args []string) error {
			return categoriesAdd(ctx, a, p, category{ID: id, Name: args[0], Emoji: emoji})
		})
	add.Flags().StringVar(&emoji, "emoji", "", "an emoji shown beside the name")
	add.Flags().StringVar(&id, "id", "", "document id (default: the name in kebab case)")
	g.add(&cobra.Command{Use: "remove ID", Short: "Remove a category", Args: exactArgs(1)}, categoriesRemove)
	return g.cmd
}

func categoriesList(ctx context.Context, a *admin, p printer, _ []string) error {
	snaps, err := a.Firestore.Collection(marketplace.Categories).OrderBy("name", 1).Documents(ctx).GetAll()
	if err != nil {
		return fmt.Errorf("list categories: %w", err)
	}
	cats := []category{}
	rows := [][]string{}
	for _, s := range snaps {
		c := category{ID: s.Ref.ID}
		c.Name, _ = s.Data()["name"].(string)
		c.Emoji, _ = s.Data()["emoji"].(string)
		cats = append(cats, c)
		rows = append(rows, []string{c.ID, c.Emoji, c.Name})
	}
	return p.table([]string{"ID", "EMOJI", "NAME"}, rows, cats)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func categoriesAdd(ctx context.Context, a *admin, p printer, c category) error {
	if strings.TrimSpace(c.Name) == "" {
		return usageErrorf("a category needs a name")
	}
	if c.ID == "" {
		c.ID = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(c.Name), "-"), "-")
	}
	data := map[string]any{"name": c.Name}
	if c.Emoji != "" {
		data["emoji"] = c.Emoji
	}
	_, err := a.Firestore.Collection(marketplace.Categories).Doc(c.ID).Create(ctx, data)
	if status.Code(err) == codes.AlreadyExists {
		return fmt.Errorf("category already exists: %s", c.ID)
	}
	if err != nil {
		return fmt.Errorf("add category: %w", err)
	}
	return p.done("added category "+c.ID, c)
}

func categoriesRemove(ctx context.Context, a *admin, p printer, args []string) error {
	ref := a.Firestore.Collection(marketplace.Categories).Doc(args[0])
	_, err := ref.Delete(ctx, existsPrecondition)
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("category not found: %s", args[0])
	}
	if err != nil {
		return fmt.Errorf("remove category: %w", err)
	}
	return p.done("removed category "+args[0], map[string]any{"id": args[0], "removed": true})
}
