package snapshot

import (
	"encoding/json"
	"strings"
	"testing"
)

// allIDs lists every backend node id of raw's documents.
func allIDs(t *testing.T, raw []byte) []int64 {
	t.Helper()
	s, err := decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, d := range s.docs {
		for _, id := range d.backend {
			ids = append(ids, int64(id))
		}
	}
	return ids
}

// TestDescribeNeverShowsASecret: described node by node, every node of every fixture, no
// secret the outline hides comes out (value, name, text), and real captures have boxes.
func TestDescribeNeverShowsASecret(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			raw, _ := loadFixture(t, name)
			ids := allIDs(t, raw)
			nodes, err := Describe(raw, ids, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) == 0 {
				t.Fatal("nothing described")
			}
			b, _ := json.Marshal(nodes)
			for _, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("Describe shows %q", s)
				}
			}
			rects, secret := 0, 0
			for _, n := range nodes {
				if n.Visible && n.Rect != nil && n.Rect.Width > 0 {
					rects++
				}
				if n.Secret {
					secret++
					if n.Value != "" {
						t.Errorf("a secret field with a value: %+v", n)
					}
				}
			}
			if rects == 0 {
				t.Error("no visible node has a box: the layout bounds were not read")
			}
			if name == "login" && secret == 0 {
				t.Error("the login page's password field is not described as secret")
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	const secret = "hunter2-typed"
	d := newTDoc("https://a.example/shop")
	f := d.el(body, "FORM", "action", "/reserve", "method", "post")
	lab := d.el(f, "LABEL", "for", "q")
	d.text(lab, "Quantity")
	qty := d.input(f, "2", "type", "number", "id", "q", "name", "quantity")
	pw := d.input(f, "prefilled-secret", "type", "password", "name", "pw")
	typed := d.input(f, secret, "type", "text", "name", "f_9x2") // the host typed into it
	asButton := d.input(f, "", "type", "button", "name", "q2", "value", secret)
	box := d.input(f, "", "type", "checkbox", "name", "agree")
	d.nodes[box].inputValue = nil
	btn := d.el(f, "BUTTON", "type", "submit", "disabled", "")
	d.text(btn, "Reserve")
	status := d.el(body, "P", "id", "status")
	span := d.el(status, "SPAN")
	d.text(span, "Reserved")
	d.text(status, " two units")
	hidden := d.el(body, "DIV")
	d.nodes[hidden].display = "none"
	d.text(hidden, "Secret panel")
	raw := synth(t, d)
	id := func(i int) int64 { return int64(i + 1) }
	taint := map[int64]bool{id(typed): true, id(asButton): true}
	nodes, err := Describe(raw, []int64{id(qty), id(pw), id(typed), id(asButton), id(box), id(btn), id(status), id(hidden), 99999}, Options{Tainted: taint})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nodes[99999]; ok {
		t.Error("an unknown id was described")
	}
	if n := nodes[id(qty)]; n.Kind != "input" || n.Name != "Quantity" || n.Value != "2" || n.Secret || !n.Visible || !n.Top || n.Rect == nil || n.Rect.Width != 100 {
		t.Errorf("quantity field: %+v", n)
	}
	if n := nodes[id(pw)]; !n.Secret || n.Value != "" {
		t.Errorf("password field: %+v", n)
	}
	if n := nodes[id(typed)]; !n.Secret || n.Value != "" {
		t.Errorf("tainted field: %+v", n)
	}
	if n := nodes[id(asButton)]; !n.Secret || strings.Contains(n.Name+n.Text+n.Value, secret) {
		t.Errorf("tainted field turned button: %+v", n)
	}
	if n := nodes[id(box)]; n.Checked || n.Type != "checkbox" {
		t.Errorf("checkbox: %+v", n)
	}
	if n := nodes[id(btn)]; n.Kind != "button" || n.Text != "Reserve" || !n.Disabled {
		t.Errorf("button: %+v", n)
	}
	if n := nodes[id(status)]; n.Text != "Reserved two units" || n.Kind != "" || !n.Visible {
		t.Errorf("status paragraph: %+v", n)
	}
	if n := nodes[id(hidden)]; n.Visible {
		t.Errorf("display:none is visible: %+v", n)
	}
	b, _ := json.Marshal(nodes)
	if strings.Contains(string(b), secret) || strings.Contains(string(b), "prefilled-secret") {
		t.Errorf("a secret was described: %s", b)
	}
	// Without the taint the same nodes show the value: the test above proves something.
	plain, _ := Describe(raw, []int64{id(typed)}, Options{})
	if plain[id(typed)].Value != secret {
		t.Errorf("untainted, the typed field reads %+v", plain[id(typed)])
	}
}

func TestTargetSecret(t *testing.T) {
	d := newTDoc("https://a.example/login")
	f := d.el(body, "FORM", "action", "/login", "method", "post")
	user := d.input(f, "", "type", "email", "name", "username")
	pw := d.input(f, "", "type", "password", "name", "password")
	otp := d.input(f, "", "type", "text", "autocomplete", "one-time-code", "name", "code")
	typed := d.input(f, "", "type", "text", "name", "shown")
	raw := synth(t, d)
	out, targets, err := Build(raw, Options{Tainted: map[int64]bool{int64(typed + 1): true}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{int64(user + 1): false, int64(pw + 1): true, int64(otp + 1): true, int64(typed + 1): true}
	seen := 0
	for _, e := range out.Elements {
		tg := targets[e.Ref]
		if w, ok := want[tg.BackendNodeID]; ok {
			seen++
			if tg.Secret != w {
				t.Errorf("%s %s: Secret %v, want %v", e.Kind, e.Name, tg.Secret, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("saw %d of the %d fields", seen, len(want))
	}
}

func TestDescribeMalformed(t *testing.T) {
	if _, err := Describe([]byte("{"), []int64{1}, Options{}); err == nil {
		t.Error("no error for a malformed snapshot")
	}
	d := newTDoc("https://a.example/")
	raw := synth(t, d)
	bad := strings.Replace(string(raw), `"bounds":[`, `"bounds":[[1,2,3,4],`, 1)
	if _, err := Describe([]byte(bad), []int64{2}, Options{}); err == nil {
		t.Error("no error for more boxes than layout objects")
	}
}
