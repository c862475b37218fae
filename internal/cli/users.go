package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/firestore"
	"firebase.google.com/go/v4/auth"
	"github.com/loupe-dev/loupe/internal/marketplace"
	"github.com/spf13/cobra"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// UsersOptions are the flags of `loupe app users create`.
type UsersOptions struct {
	Email, Password, Name string
}

// userView is a user as the users commands print it: the Auth record joined
// with the profile's role and mentor flag.
type userView struct {
	UID         string `json:"uid"`
	Email       string `json:"email"`
	DisplayName string `json:"displayName"`
	Disabled    bool   `json:"disabled"`
	Role        string `json:"role"`
	IsMentor    bool   `json:"isMentor"`
	CreatedAt   string `json:"createdAt"`
}

// NewCmdUsers builds `loupe app users` and its subcommands.
func NewCmdUsers() *cobra.Command {
	opts := &UsersOptions{}
	g := newAdminGroup("users", "Manage users: accounts, roles, mentors")
	g.add(&cobra.Command{Use: "list", Short: "List every user", Args: noArgs}, usersList)
	g.add(&cobra.Command{Use: "get UID", Short: "Show one user", Args: exactArgs(1)}, usersGet)
	g.add(&cobra.Command{Use: "set-role UID ROLE", Short: "Set a user's role (custom claim and profile)", Args: exactArgs(2)}, usersSetRole)
	g.add(&cobra.Command{Use: "set-mentor UID true|false", Short: "Set whether a user is a mentor", Args: exactArgs(2)}, usersSetMentor)
	g.add(&cobra.Command{Use: "disable UID", Short: "Disable a user's sign-in", Args: exactArgs(1)}, usersSetDisabled(true))
	g.add(&cobra.Command{Use: "enable UID", Short: "Enable a user's sign-in", Args: exactArgs(1)}, usersSetDisabled(false))
	g.add(&cobra.Command{Use: "delete UID", Short: "Delete a user and their profile", Args: exactArgs(1)}, usersDelete)
	create := g.add(&cobra.Command{Use: "create", Short: "Create a user with the default profile", Args: noArgs},
		func(ctx context.Context, a *admin, p printer, _ []string) error { return usersCreate(ctx, a, p, opts) })
	create.Flags().StringVar(&opts.Email, "email", "", "e-mail address (required)")
	create.Flags().StringVar(&opts.Password, "password", "", "password, at least 6 characters (required)")
	create.Flags().StringVar(&opts.Name, "name", "", "display name")
	return g.cmd
}

func usersList(ctx context.Context, a *admin, p printer, _ []string) error {
	var views []userView
	it := a.Auth.Users(ctx, "")
	for {
		u, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return fmt.Errorf("list users: %w", err)
		}
		views = append(views, viewOf(u.UserRecord))
	}
	if err := joinProfiles(ctx, a, views); err != nil {
		return err
	}
	rows := make([][]string, len(views))
	for i, v := range views {
		rows[i] = []string{v.UID, v.Email, v.DisplayName, v.Role, strconv.FormatBool(v.IsMentor), strconv.FormatBool(v.Disabled)}
	}
	if views == nil {
		views = []userView{}
	}
	return p.table([]string{"UID", "EMAIL", "NAME", "ROLE", "MENTOR", "DISABLED"}, rows, views)
}

func usersGet(ctx context.Context, a *admin, p printer, args []string) error {
	v, err := getUser(ctx, a, args[0])
	if err != nil {
		return err
	}
	return p.record([][2]string{
		{"uid", v.UID}, {"email", v.Email}, {"name", v.DisplayName}, {"role", v.Role},
		{"mentor", strconv.FormatBool(v.IsMentor)}, {"disabled", strconv.FormatBool(v.Disabled)}, {"created", v.CreatedAt},
	}, v)
}

func usersCreate(ctx context.Context, a *admin, p printer, o *UsersOptions) error {
	if o.Email == "" || o.Password == "" {
		return usageErrorf("users create needs --email and --password")
	}
	u, err := a.Auth.CreateUser(ctx, (&auth.UserToCreate{}).Email(o.Email).Password(o.Password).DisplayName(firstNonEmpty(o.Name, o.Email)))
	if err != nil {
		return fmt.Errorf("create user %s: %w", o.Email, err)
	}
	profile := marketplace.NewProfile(u.UID, u.Email, u.DisplayName, time.Now())
	if _, err := a.Firestore.Collection(marketplace.Users).Doc(u.UID).Set(ctx, profile); err != nil {
		return fmt.Errorf("create profile of %s: %w", u.UID, err)
	}
	v := viewOf(u)
	v.Role, v.IsMentor = profile.Role, profile.IsMentor
	return p.done("created user "+u.UID+" ("+u.Email+")", v)
}

func usersSetRole(ctx context.Context, a *admin, p printer, args []string) error {
	uid, role := args[0], args[1]
	u, err := a.Auth.GetUser(ctx, uid)
	if err != nil {
		return userErr(uid, err)
	}
	claims := map[string]any{}
	for k, v := range u.CustomClaims {
		claims[k] = v
	}
	claims["role"] = role
	if err := a.Auth.SetCustomUserClaims(ctx, uid, claims); err != nil {
		return fmt.Errorf("set role of %s: %w", uid, err)
	}
	if err := updateProfile(ctx, a, uid, []firestore.Update{{Path: "role", Value: role}}); err != nil {
		return err
	}
	return p.done("role of "+uid+" is now "+role, map[string]any{"uid": uid, "role": role})
}

func usersSetMentor(ctx context.Context, a *admin, p printer, args []string) error {
	uid := args[0]
	mentor, err := strconv.ParseBool(args[1])
	if err != nil {
		return usageErrorf("set-mentor takes true or false, not %q", args[1])
	}
	if _, err := a.Auth.GetUser(ctx, uid); err != nil {
		return userErr(uid, err)
	}
	if err := updateProfile(ctx, a, uid, []firestore.Update{{Path: "isMentor", Value: mentor}}); err != nil {
		return err
	}
	word := "no longer a mentor"
	if mentor {
		word = "now a mentor"
	}
	return p.done(uid+" is "+word, map[string]any{"uid": uid, "isMentor": mentor})
}

func usersSetDisabled(disabled bool) func(context.Context, *admin, printer, []string) error {
	return func(ctx context.Context, a *admin, p printer, args []string) error {
		uid := args[0]
		if _, err := a.Auth.UpdateUser(ctx, uid, (&auth.UserToUpdate{}).Disabled(disabled)); err != nil {
			return userErr(uid, err)
		}
		word := "enabled"
		if disabled {
			word = "disabled"
		}
		return p.done(word+" "+uid, map[string]any{"uid": uid, "disabled": disabled})
	}
}

func usersDelete(ctx context.Context, a *admin, p printer, args []string) error {
	uid := args[0]
	if err := a.Auth.DeleteUser(ctx, uid); err != nil {
		return userErr(uid, err)
	}
	if _, err := a.Firestore.Collection(marketplace.Users).Doc(uid).Delete(ctx); err != nil {
		return fmt.Errorf("delete profile of %s: %w", uid, err)
	}
	return p.done("deleted "+uid, map[string]any{"uid": uid, "deleted": true})
}

func getUser(ctx context.Context, a *admin, uid string) (userView, error) {
	u, err := a.Auth.GetUser(ctx, uid)
	if err != nil {
		return userView{}, userErr(uid, err)
	}
	views := []userView{viewOf(u)}
	err = joinProfiles(ctx, a, views)
	return views[0], err
}

// joinProfiles fills role and mentor flag from users/{uid}; a user without a
// profile shows the defaults (role 'user').
func joinProfiles(ctx context.Context, a *admin, views []userView) error {
	if len(views) == 0 {
		return nil
	}
	refs := make([]*firestore.DocumentRef, len(views))
	for i, v := range views {
		refs[i] = a.Firestore.Collection(marketplace.Users).Doc(v.UID)
	}
	snaps, err := a.Firestore.GetAll(ctx, refs)
	if err != nil {
		return fmt.Errorf("read profiles: %w", err)
	}
	for i, s := range snaps {
		views[i].Role = "user"
		if !s.Exists() {
			continue
		}
		if role, ok := s.Data()["role"].(string); ok && role != "" {
			views[i].Role = role
		}
		views[i].IsMentor, _ = s.Data()["isMentor"].(bool)
	}
	return nil
}

func updateProfile(ctx context.Context, a *admin, uid string, updates []firestore.Update) error {
	updates = append(updates, firestore.Update{Path: "updatedAt", Value: firestore.ServerTimestamp})
	_, err := a.Firestore.Collection(marketplace.Users).Doc(uid).Update(ctx, updates)
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("profile not found: %s", uid)
	}
	if err != nil {
		return fmt.Errorf("update profile of %s: %w", uid, err)
	}
	return nil
}

func viewOf(u *auth.UserRecord) userView {
	return userView{
		UID:         u.UID,
		Email:       u.Email,
		DisplayName: u.DisplayName,
		Disabled:    u.Disabled,
		CreatedAt:   time.UnixMilli(u.UserMetadata.CreationTimestamp).UTC().Format(time.RFC3339),
	}
}

// userErr turns the Admin SDK's not-found error into the one-line message.
func userErr(uid string, err error) error {
	if auth.IsUserNotFound(err) {
		return fmt.Errorf("user not found: %s", uid)
	}
	return fmt.Errorf("user %s: %w", uid, err)
}

// existsPrecondition makes a delete fail with NOT_FOUND when there is nothing to delete.
var existsPrecondition = firestore.Exists
