package emulator

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/loupe-dev/loupe/internal/auth"
)

// page renders one of the emulator's small dark pages.
var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · Loupe</title>
<style>
:root{color-scheme:dark}*,*::before,*::after{box-sizing:border-box}
body{margin:0;min-height:100vh;display:grid;place-items:center;padding:16px;background:#09090b;color:#f4f4f5;font:15px/1.5 ui-sans-serif,system-ui,sans-serif}
main{width:min(440px,100%);min-width:0;overflow-wrap:anywhere;background:#18181b;border:1px solid #27272a;border-radius:16px;padding:28px;box-shadow:0 20px 60px #0008}
h1{font-size:20px;margin:0 0 6px}p{color:#a1a1aa;margin:0 0 18px}
label{display:block;font-size:13px;color:#d4d4d8;margin:12px 0 6px}
input{box-sizing:border-box;width:100%;padding:10px 12px;border-radius:10px;border:1px solid #3f3f46;background:#09090b;color:#fafafa;font:inherit}
button,.btn{display:block;width:100%;margin-top:16px;padding:10px 12px;border:0;border-radius:10px;background:#7c3aed;color:#fff;font:inherit;font-weight:600;cursor:pointer;text-align:center;text-decoration:none}
button:hover,.btn:hover{background:#8b5cf6}
.account{display:flex;gap:12px;align-items:center;width:100%;margin:8px 0;padding:10px 12px;background:#09090b;border:1px solid #27272a;color:#fafafa;text-align:left}
.account:hover{background:#27272a}
.avatar{flex:none;width:32px;height:32px;border-radius:50%;background:#7c3aed;display:grid;place-items:center;font-weight:700}
.muted{color:#a1a1aa;font-size:13px}
table{width:100%;border-collapse:collapse;font-size:13px}td,th{padding:8px 6px;border-bottom:1px solid #27272a;text-align:left;vertical-align:top}
a{color:#a78bfa}
.error{color:#fca5a5}
</style></head><body><main>
<h1>{{.Title}}</h1>{{if .Message}}<p{{if .Error}} class="error"{{end}}>{{.Message}}</p>{{end}}
{{.Body}}
</main>{{if .Script}}<script>{{.Script}}</script>{{end}}</body></html>`))

type pageData struct {
	Title, Message string
	Error          bool
	Body           template.HTML
	Script         template.JS
}

func render(w http.ResponseWriter, status int, d pageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = page.Execute(w, d)
}

// actionPage completes e-mail actions: it verifies an address, or asks for a
// new password and sets it.
func (s *Service) actionPage(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if r.Form.Get("mode") == "signIn" {
		signInLink(w, r)
		return
	}
	a, err := s.engine.Act(r.Form.Get("oobCode"), r.Form.Get("mode"), r.Form.Get("newPassword"), r.Method == http.MethodPost)
	if err != nil {
		render(w, http.StatusInternalServerError, pageData{Title: "Something went wrong", Message: err.Error(), Error: true})
		return
	}
	back := template.HTML(`<a class="btn" href="` + template.HTMLEscapeString(continueOr(a.ContinueURL)) + `">Continue to Loupe</a>`)
	code := r.Form.Get("oobCode")
	switch a.Outcome {
	case auth.ActionExpired:
		render(w, http.StatusBadRequest, pageData{Title: "This link has expired", Message: "The link was already used or is not valid. Ask for a new e-mail.", Error: true})
	case auth.ActionVerified:
		render(w, http.StatusOK, pageData{Title: "Your e-mail is verified", Message: a.Email + " is confirmed.", Body: back})
	case auth.ActionAskPassword:
		render(w, http.StatusOK, pageData{Title: "Choose a new password", Message: "For " + a.Email + ".", Body: resetForm(code)})
	case auth.ActionWeakPassword:
		render(w, http.StatusBadRequest, pageData{Title: "Choose a new password", Message: "Password should be at least 6 characters.", Error: true, Body: resetForm(code)})
	case auth.ActionPasswordChanged:
		render(w, http.StatusOK, pageData{Title: "Password changed", Message: "You can now sign in to " + a.Email + " with your new password.", Body: back})
	default:
		render(w, http.StatusBadRequest, pageData{Title: "Unknown action", Message: "This link asks for something loupe does not do.", Error: true})
	}
}

// signInLink opens an e-mail sign-in link as firebase-tools does: it sends
// the browser on to the link's continueUrl with the link's parameters, where
// the app calls signInWithEmailLink.
func signInLink(w http.ResponseWriter, r *http.Request) {
	to, err := url.Parse(r.Form.Get("continueUrl"))
	if r.Form.Get("continueUrl") == "" || err != nil || !to.IsAbs() {
		render(w, http.StatusBadRequest, pageData{Title: "This link cannot sign in", Message: "The sign-in link has no continueUrl: the app sends it with sendSignInLinkToEmail's url setting.", Error: true})
		return
	}
	q := to.Query()
	for name, values := range r.Form {
		if name != "continueUrl" && len(values) > 0 {
			q.Set(name, values[0])
		}
	}
	to.RawQuery = q.Encode()
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

func continueOr(u string) string {
	if u == "" {
		return "/auth"
	}
	return u
}

func resetForm(code string) template.HTML {
	return template.HTML(`<form method="post" action="/emulator/action">
<input type="hidden" name="mode" value="resetPassword"><input type="hidden" name="oobCode" value="` + template.HTMLEscapeString(code) + `">
<label for="pw">New password</label><input id="pw" name="newPassword" type="password" minlength="6" required autofocus>
<button type="submit">Save password</button></form>`)
}

// mailPage lists every captured e-mail of the default project, newest first.
func (s *Service) mailPage(w http.ResponseWriter, _ *http.Request) {
	mail := s.engine.Mail(s.env.ProjectID)
	sort.Slice(mail, func(i, j int) bool { return mail[i].SentAt.After(mail[j].SentAt) })
	var b strings.Builder
	b.WriteString(`<table><tr><th>To</th><th>What</th><th>Link</th></tr>`)
	for _, m := range mail {
		what := map[string]string{"PASSWORD_RESET": "Password reset", "VERIFY_EMAIL": "Verify e-mail", "EMAIL_SIGNIN": "Sign-in link"}[m.RequestType]
		fmt.Fprintf(&b, `<tr><td>%s<div class="muted">%s</div></td><td>%s</td><td><a href="%s">Open</a></td></tr>`,
			template.HTMLEscapeString(m.Email), m.SentAt.Format("Jan 2, 15:04:05"), what, template.HTMLEscapeString(m.OOBLink))
	}
	b.WriteString(`</table>`)
	msg := fmt.Sprintf("%d e-mail(s) loupe would have sent.", len(mail))
	render(w, http.StatusOK, pageData{Title: "Mail", Message: msg, Body: template.HTML(b.String())})
}

// chooserPage is the local Google sign-in: pick a fake Google account or add
// one; the page hands an unsigned id_token (claims JSON) back to the opener.
func (s *Service) chooserPage(w http.ResponseWriter, r *http.Request) {
	origin := r.URL.Query().Get("origin")
	var accounts strings.Builder
	for _, acc := range s.engine.LinkedAccounts(s.env.ProjectID, "google.com") {
		initial := "?"
		if acc.DisplayName != "" {
			initial = strings.ToUpper(acc.DisplayName[:1])
		}
		fmt.Fprintf(&accounts, `<button type="button" class="account" data-sub="%s" data-email="%s" data-name="%s"><span class="avatar">%s</span><span>%s<div class="muted">%s</div></span></button>`,
			template.HTMLEscapeString(acc.RawID), template.HTMLEscapeString(acc.Email), template.HTMLEscapeString(acc.DisplayName),
			template.HTMLEscapeString(initial), template.HTMLEscapeString(acc.DisplayName), template.HTMLEscapeString(acc.Email))
	}
	body := accounts.String() + `<form id="add"><label for="email">E-mail</label><input id="email" type="email" required placeholder="you@example.com">
<label for="name">Name</label><input id="name" required placeholder="Your name"><button type="submit">Add account and sign in</button></form>`
	script := `const origin = ` + jsString(origin) + `;
function choose(sub, email, name) {
  const idToken = JSON.stringify({sub, email, email_verified: true, name});
  if (window.opener && origin) { window.opener.postMessage({type: 'loupe-google-id-token', idToken}, origin); window.close(); }
  else { document.querySelector('p').textContent = 'Signed in as ' + email + '. Open this page from the app to finish.'; }
}
document.querySelectorAll('.account').forEach(b => b.addEventListener('click', () => choose(b.dataset.sub, b.dataset.email, b.dataset.name)));
document.getElementById('add').addEventListener('submit', async e => {
  e.preventDefault();
  const email = document.getElementById('email').value.trim().toLowerCase();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(email)));
  let n = 0n; for (const b of digest.slice(0, 8)) n = (n << 8n) | BigInt(b);
  choose('1' + (n % 100000000000000000n).toString().padStart(20, '0'), email, document.getElementById('name').value.trim());
});`
	render(w, http.StatusOK, pageData{Title: "Sign in with Google", Message: "Choose an account to continue to Loupe. These are local test accounts: no Google servers are involved.", Body: template.HTML(body), Script: template.JS(script)})
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "<", `\u003c`, "\n", `\n`).Replace(s) + "'"
}
