package auth

import (
	"net/url"
	"strings"
)

// The out-of-band code methods: e-mails with action links, which loupe
// keeps in an inbox, and the actions they complete.

func (s *Engine) sendOobCode(q *Call) (map[string]any, error) {
	p := s.store.project(q.Project)
	var u *User
	mode := ""
	switch q.str("requestType") {
	case "EMAIL_SIGNIN":
		email := strings.ToLower(q.str("email"))
		if email == "" {
			return nil, errMissingEmail
		}
		if !validEmail(email) {
			return nil, errInvalidEmail
		}
		// The account may not exist yet: signing in with the link makes it.
		if u = p.byEmail(email); u == nil {
			u = &User{Email: email, LocalID: noAccount}
		}
		mode = "signIn"
	case "PASSWORD_RESET":
		email := strings.ToLower(q.str("email"))
		if email == "" {
			return nil, errMissingEmail
		}
		if u = p.byEmail(email); u == nil {
			return nil, errEmailNotFound
		}
		mode = "resetPassword"
	case "VERIFY_EMAIL":
		var err error
		if u, _, err = s.target(q); err != nil {
			return nil, err
		}
		if u.Email == "" {
			return nil, errMissingEmail
		}
		mode = "verifyEmail"
	case "":
		return nil, errMissingReqType
	default:
		return nil, badRequest("INVALID_REQ_TYPE : Unsupported request type " + q.str("requestType"))
	}
	code := randomString(50)
	link := q.BaseURL + "/emulator/action?mode=" + mode + "&lang=en&oobCode=" + code + "&apiKey=fake-api-key"
	if c := q.str("continueUrl"); c != "" {
		link += "&continueUrl=" + url.QueryEscape(c)
	}
	p.send(OOBCode{Email: u.Email, RequestType: q.str("requestType"), OOBCode: code, OOBLink: link, SentAt: s.now().UTC(), ContinueURL: q.str("continueUrl")}, u.LocalID)
	return map[string]any{"kind": "identitytoolkit#GetOobConfirmationCodeResponse", "email": u.Email}, nil
}

// noAccount is the account an e-mail sign-in code is for when no account
// has its address yet (a uid never has a NUL byte).
const noAccount = "\x00"

// signInWithEmailLink signs in with the code of an e-mail sign-in link
// (accounts:signInWithEmailLink), making the account when the address has
// none; the address is verified. With an idToken, it links the address to
// that user. Blocking functions run as for any sign-in (method "emailLink").
func (s *Engine) signInWithEmailLink(q *Call) (map[string]any, error) {
	email := strings.ToLower(q.str("email"))
	if email == "" {
		return nil, errMissingEmail
	}
	if q.str("oobCode") == "" {
		return nil, errMissingOOBCode
	}
	p := s.store.project(q.Project)
	id, ok := p.codes[q.str("oobCode")]
	var m *OOBCode
	for i := range p.mail {
		if ok && p.mail[i].OOBCode == q.str("oobCode") {
			m = &p.mail[i]
		}
	}
	if m == nil || m.RequestType != "EMAIL_SIGNIN" {
		return nil, errInvalidOOBCode
	}
	if m.Email != email {
		return nil, badRequest("INVALID_EMAIL : The email provided does not match the sign-in email address.")
	}
	u := p.byEmail(email)
	if id != noAccount && u == nil {
		u = p.user(id)
	}
	if q.str("idToken") != "" {
		linked, _, err := s.userFromToken(q)
		if err != nil {
			return nil, err
		}
		if u != nil && u.LocalID != linked.LocalID {
			return nil, errEmailExists
		}
		u = linked
	}
	isNew := u == nil
	if isNew {
		var err error
		if u, err = s.newUser(p, q.localID); err != nil {
			return nil, err
		}
		q.localID = u.LocalID
	} else if u.disabled() {
		return nil, errUserDisabled
	}
	u.Email, u.EmailVerified = email, flag(true)
	if u.provider("password") == nil {
		u.ProviderUserInfo = append(u.ProviderUserInfo, ProviderInfo{ProviderID: "password", Email: email, FederatedID: email, RawID: email})
	}
	if err := s.signInBlocked(q, u, "emailLink", isNew); err != nil {
		return nil, err
	}
	p.useUp(q.str("oobCode"))
	out := map[string]any{"kind": "identitytoolkit#EmailLinkSigninResponse", "email": email, "localId": u.LocalID, "isNewUser": isNew}
	return merge(out, s.tokens(q, u, "password")), nil
}

// useCode finds the user and mail of an out-of-band code.
func (s *Engine) useCode(p *project, code string) (*User, *OOBCode) {
	id, ok := p.codes[code]
	if !ok {
		return nil, nil
	}
	for i := range p.mail {
		if p.mail[i].OOBCode == code {
			return p.user(id), &p.mail[i]
		}
	}
	return nil, nil
}

func (s *Engine) resetPassword(q *Call) (map[string]any, error) {
	if q.str("oobCode") == "" {
		return nil, errMissingOOBCode
	}
	p := s.store.project(q.Project)
	u, m := s.useCode(p, q.str("oobCode"))
	if u == nil || m.RequestType != "PASSWORD_RESET" {
		return nil, errInvalidOOBCode
	}
	out := map[string]any{"kind": "identitytoolkit#ResetPasswordResponse", "requestType": "PASSWORD_RESET", "email": u.Email}
	if pw := q.str("newPassword"); pw != "" {
		if len(pw) < 6 {
			return nil, errWeakPassword
		}
		u.setPassword(pw, s.now())
		u.EmailVerified = flag(true)
		p.useUp(q.str("oobCode"))
	}
	return out, nil
}

// ActionOutcome is what following an e-mail's action link did.
type ActionOutcome int

// The outcomes of an action link.
const (
	ActionExpired         ActionOutcome = iota // the code is used up or unknown
	ActionUnknown                              // the mode is not one loupe does
	ActionVerified                             // the e-mail is verified
	ActionAskPassword                          // a reset link, opened: ask for the new password
	ActionWeakPassword                         // the new password is too short
	ActionPasswordChanged                      // the password is set
)

// Action is an action link's result: its outcome, the account's e-mail
// and where the link continues to.
type Action struct {
	Outcome     ActionOutcome
	Email       string
	ContinueURL string
}

// Act completes the e-mail action of code in any project: mode
// "verifyEmail" verifies the address; "resetPassword" sets newPassword
// when submit is set (else it only asks for one). Its change is durable
// before it returns.
func (s *Engine) Act(code, mode, newPassword string, submit bool) (Action, error) {
	var a Action
	_, err := s.store.run(func() error {
		a = s.act(code, mode, newPassword, submit)
		return nil
	})
	return a, err
}

// act is Act with the store's lock held.
func (s *Engine) act(code, mode, newPassword string, submit bool) Action {
	var p *project
	var u *User
	var m *OOBCode
	for _, proj := range s.store.projects {
		if u, m = s.useCode(proj, code); u != nil {
			p = proj
			break
		}
	}
	if u == nil {
		return Action{Outcome: ActionExpired}
	}
	a := Action{Email: u.Email, ContinueURL: m.ContinueURL}
	switch mode {
	case "verifyEmail":
		u.EmailVerified = flag(true)
		p.useUp(code)
		a.Outcome = ActionVerified
	case "resetPassword":
		switch {
		case !submit:
			a.Outcome = ActionAskPassword
		case len(newPassword) < 6:
			a.Outcome = ActionWeakPassword
		default:
			u.setPassword(newPassword, s.now())
			p.useUp(code)
			a.Outcome = ActionPasswordChanged
		}
	default:
		a.Outcome = ActionUnknown
	}
	return a
}
