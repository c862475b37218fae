package pull

import (
	"strings"
	"testing"
	"time"

	"firebase.google.com/go/v4/auth"
)

func TestParseFilter(t *testing.T) {
	for _, tc := range []struct {
		in, field, op, value string // value: the parsed value's kind and text
		users                bool
		err                  string
	}{
		{in: "age >= 18", field: "age", op: ">=", value: "integer_value:18"},
		{in: "open == true", field: "open", op: "==", value: "boolean_value:true"},
		{in: `name == "Ann Lee"`, field: "name", op: "==", value: `string_value:"Ann Lee"`},
		{in: "city == Paris", field: "city", op: "==", value: `string_value:"Paris"`},
		{in: "at > 2024-01-02T03:04:05Z", field: "at", op: ">", value: "timestamp_value:{seconds:1704164645}"},
		{in: "tags array-contains-any [\"a\", 1]", field: "tags", op: "array-contains-any", value: "array_value:"},
		{in: "`a.b`.c == 1.5", field: "`a.b`.c", op: "==", value: "double_value:1.5"},
		{in: "email matches *@corp.example", users: true, field: "email", op: "matches", value: `string_value:"*@corp.example"`},
		{in: "email matches *@x", err: `"matches" is not an operator`},
		{in: "age=18", err: "is not an operator"},
		{in: "age >=", err: "no value after >="},
		{in: "tags in 3", err: "in takes a list"},
		{in: "n < [1]", err: "< does not compare with a list"},
		{in: `s == "open`, err: "is not valid JSON"},
		{in: "`a == 1", err: "a back quote is not closed"},
		{in: "a..b == 1", err: "has an empty segment"},
	} {
		f, err := ParseFilter(tc.in, tc.users)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := strings.ReplaceAll(f.Value.String(), "  ", " "); f.Field != tc.field || f.Op != tc.op || !strings.HasPrefix(got, tc.value) {
			t.Errorf("%s: %s %s %s, want %s %s %s", tc.in, f.Field, f.Op, got, tc.field, tc.op, tc.value)
		}
	}
}

func TestParseOrder(t *testing.T) {
	for in, want := range map[string]Order{"age": {Field: "age"}, "age desc": {Field: "age", Desc: true}, "`x y` asc": {Field: "`x y`"}} {
		if got, err := ParseOrder(in); err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
	}
	if _, err := ParseOrder("age sideways"); err == nil {
		t.Error("age sideways: no error")
	}
}

// TestUserQuery: --user-query's filters over account attributes.
func TestUserQuery(t *testing.T) {
	u := &account{LocalID: "u1", Email: "ann@corp.example", CustomAttributes: `{"role": "admin", "level": 3}`,
		ProviderUserInfo: []*auth.UserInfo{{ProviderID: "password"}, {ProviderID: "google.com"}},
		CreatedAt:        time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).UnixMilli()}
	for q, want := range map[string]bool{
		"email matches *@corp.example":                       true,
		"email matches *@other.example":                      false,
		"customClaims.role == admin":                         true,
		"customClaims.level >= 3":                            true,
		"customClaims.level > 3":                             false,
		"providers array-contains google.com":                true,
		"providers array-contains apple.com":                 false,
		"createdAt > 2024-01-01T00:00:00Z":                   true,
		"createdAt < 2024-01-01T00:00:00Z":                   false,
		"disabled == false":                                  true,
		"phoneNumber != \"+1\"":                              false,
		"uid in [\"u1\", \"u2\"]":                            true,
		"uid not-in [\"u1\"]":                                false,
		"displayName == null":                                true,
		"providers array-contains-any [\"x\", \"password\"]": true,
	} {
		f, err := ParseFilter(q, true)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := CheckUserQueryField(f.Field); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := matchesAll([]Filter{f}, u); got != want {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	if err := CheckUserQueryField("password"); err == nil {
		t.Error("password: no error")
	}
}

// FuzzParseFilter: no input makes ParseFilter panic, and what it accepts
// has a field, a known operator and a value.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"age >= 18", "`a.b` in [1, \"x\"]", "at > 2024-01-02T03:04:05Z", "e matches *@x", "x == {\"a\": [null]}", "`", "a  ==  b"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, users bool) {
		flt, err := ParseFilter(s, users)
		if err != nil {
			return
		}
		if _, ok := filterOps[flt.Op]; flt.Field == "" || flt.Value == nil || (!ok && flt.Op != matchesOp) {
			t.Fatalf("%q: %+v", s, flt)
		}
	})
}
