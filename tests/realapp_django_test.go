//go:build linux

package tests

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/headless-dev/headless/internal/broker/presence/presencetest"
)

// TestRealAppDjango: Django's admin (Debian's python3-django), the textbook sign-in form (POST,
// username and password fields, a CSRF token), signs in by alias and must keep doing so. The
// project is django-admin startproject's as it comes (SQLite in the test's own directory), the
// administrator made with manage.py createsuperuser on a terminal. Proof by Django: the admin
// index greets the user by name, and a session in Django's database belongs to that user.
func TestRealAppDjango(t *testing.T) {
	parallel(t)
	e := newEnv(t, envOptions{})
	py := debianPython(t, "django", "python3-django")
	dir := t.TempDir()
	manage := func(args ...string) *exec.Cmd {
		cmd := exec.Command(py, append([]string{filepath.Join(dir, "manage.py")}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + dir}
		return cmd
	}
	if out, err := exec.Command(py, "-m", "django", "startproject", "mysite", dir).CombinedOutput(); err != nil {
		t.Fatalf("django-admin startproject: %v: %s", err, out)
	}
	if out, err := manage("migrate", "--noinput").CombinedOutput(); err != nil {
		t.Fatalf("manage.py migrate: %v: %s", err, out)
	}
	const account = "sitewarden"
	pw := newCanary()
	appSweepAtEnd(t, e, pw)
	adminTTY(t, manage("createsuperuser"), []step{
		{"Username", account + "\n"},
		{"Email address:", "warden@example.test\n"},
		{"Password:", pw + "\n"},
		{"Password (again):", pw + "\n"},
	})
	port := freePort(t)
	app := startApp(t, "Django", port, "/admin/login/", manage("runserver", "--noreload", "127.0.0.1:"+strconv.Itoa(port)))

	approve, _ := presencetest.FakePinentry(t, "approve")
	lsPresence(e, approve, 5)
	lsEnroll(t, e, app.origin, "django-admin", account, pw)
	e.start(t)
	appSignIn(t, e, app.URL("/admin/login/?next=/admin/"), "", "django-admin")

	// Django's answer: its admin index, which greets the signed-in user by name.
	e.ok(t, nil, "visit", app.URL("/admin/"))
	appShows(t, e, "Site administration")
	appShows(t, e, account)
	// And its session table: a session whose user is the administrator.
	out, err := manage("shell", "-c", `
from django.contrib.sessions.models import Session
from django.contrib.auth import get_user_model
for s in Session.objects.all():
    uid = s.get_decoded().get("_auth_user_id")
    if uid:
        print("session of", get_user_model().objects.get(pk=uid).get_username())
`).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "session of "+account) {
		t.Fatalf("Django's session table holds no session of %s: %v: %s", account, err, out)
	}
}
