package fetchtest

import (
	"crypto/rand"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Members is the label of the login-protected host (Config.Members):
// members.<Domain>.
const Members = "members"

// The credentials the Members host's login form accepts.
const (
	MembersUser     = "crawler"
	MembersPassword = "open sesame"
)

// membersPages is the number of protected pages: /members/ and
// /members/p/1 .. /members/p/(membersPages-1).
const membersPages = 15

// The cookies a login sets: the session, for the Members host only; a
// preference for every host under Domain (a Domain attribute); and one
// marked Secure, which a client must never send over plain http.
const (
	sessionCookie = "session"
	domainCookie  = "theme"
	secureCookie  = "secure_probe"
)

// serveMembers answers every request to the Members host:
//
//	/                 public home page: links /login and /members/
//	/login            GET: the login form; POST user and password: 303 to
//	                  /members/ with the cookies, or 403 and the form
//	/members/...      the protected pages, a tree: page i links 2i and
//	                  2i+1 and the index; without a session cookie 302 to
//	                  /login?next=PATH, with one the server never issued 403
//	anything else     404 (robots.txt included: everything is allowed)
func (w *Web) serveMembers(sw http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	switch {
	case path == "/" && r.URL.RawQuery == "" && isRead(r):
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte(membersHTML("Members area",
			`<p>Log in to read the members' pages.</p>
<p><a href="/login">Log in</a> · <a href="/members/">Members' index</a></p>`)), time.Time{})
	case path == "/login" && isRead(r):
		w.send(sw, r, 200, "text/html; charset=utf-8", []byte(loginForm("")), time.Time{})
	case path == "/login" && r.Method == http.MethodPost:
		w.login(sw, r)
	case membersPage(path) >= 0 && isRead(r):
		c, err := r.Cookie(sessionCookie)
		switch {
		case err != nil:
			sw.Header().Set("Location", "/login?next="+url.QueryEscape(path))
			sw.WriteHeader(http.StatusFound)
		case !w.validSession(c.Value):
			http.Error(sw, "403 forbidden: session unknown or expired", http.StatusForbidden)
		default:
			w.send(sw, r, 200, "text/html; charset=utf-8", []byte(renderMembersPage(membersPage(path))), time.Time{})
		}
	case r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost:
		sw.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(sw, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.Error(sw, "404 page not found", http.StatusNotFound)
	}
}

func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// login checks the posted form (at most 4 KiB) and opens a session.
func (w *Web) login(sw http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(sw, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(sw, "400 bad form: "+err.Error(), http.StatusBadRequest)
		return
	}
	if r.PostForm.Get("user") != MembersUser || r.PostForm.Get("password") != MembersPassword {
		sw.Header().Set("Content-Type", "text/html; charset=utf-8")
		sw.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(sw, loginForm("Wrong user or password."))
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	w.mu.Lock()
	if w.sessions == nil {
		w.sessions = map[string]bool{}
	}
	w.sessions[token] = true
	w.mu.Unlock()
	http.SetCookie(sw, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.SetCookie(sw, &http.Cookie{Name: domainCookie, Value: "dark", Path: "/", Domain: w.cfg.Domain})
	http.SetCookie(sw, &http.Cookie{Name: secureCookie, Value: "1", Path: "/", Secure: true})
	sw.Header().Set("Location", "/members/")
	sw.WriteHeader(http.StatusSeeOther)
}

func (w *Web) validSession(token string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions[token]
}

// Sessions returns the number of logins the Members host has accepted.
func (w *Web) Sessions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.sessions)
}

// membersPage returns the number of the protected page at path (0 for the
// index /members/), or -1.
func membersPage(path string) int {
	if path == "/members/" {
		return 0
	}
	s, ok := strings.CutPrefix(path, "/members/p/")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n >= membersPages || strconv.Itoa(n) != s {
		return -1
	}
	return n
}

func membersPath(i int) string {
	if i == 0 {
		return "/members/"
	}
	return "/members/p/" + strconv.Itoa(i)
}

func renderMembersPage(i int) string {
	var b strings.Builder
	b.WriteString("<p>Members only: page " + strconv.Itoa(i) + ".</p>\n<ul>\n")
	for _, j := range []int{2 * i, 2*i + 1} {
		if j > 0 && j < membersPages {
			b.WriteString(`<li><a href="` + membersPath(j) + `">Page ` + strconv.Itoa(j) + "</a></li>\n")
		}
	}
	b.WriteString(`</ul><p><a href="/members/">Index</a> · <a href="/">Home</a></p>`)
	return membersHTML("Members page "+strconv.Itoa(i), b.String())
}

func loginForm(msg string) string {
	if msg != "" {
		msg = "<p>" + html.EscapeString(msg) + "</p>\n"
	}
	return membersHTML("Log in", msg+`<form method="post" action="/login">
<label>User <input name="user"></label>
<label>Password <input name="password" type="password"></label>
<button>Log in</button>
</form>`)
}

func membersHTML(title, body string) string {
	return "<!DOCTYPE html>\n<html><head><title>" + html.EscapeString(title) + "</title></head><body>\n" + body + "\n</body></html>\n"
}

// MembersPages returns the URLs of the Members host's protected pages,
// sorted: what a crawl that logged in finds under /members/, and one
// that did not never sees. nil without Config.Members. Its public pages
// (/ and /login) are not listed, nor are any of its pages in Pages or
// Reachable: nothing links the host.
func (w *Web) MembersPages() []string {
	if !w.cfg.Members {
		return nil
	}
	out := make([]string, membersPages)
	for i := range out {
		out[i] = w.URL(w.Host(Members), membersPath(i))
	}
	slices.Sort(out)
	return out
}
