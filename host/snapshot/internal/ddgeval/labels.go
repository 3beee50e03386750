package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// labels are DuckDuckGo's hand labels of one captured page, by the backend node id of the
// listed element they land on.
type labels struct {
	scoring map[int64]string // data-manual-scoring: username, emailAddress, password, …
	submit  map[int64]bool   // data-manual-submit: the control a person clicks
}

// readLabels finds the labelled nodes of raw (a captureSnapshot result) and moves each label
// to the element the outline lists for it: the node itself when listed, else its nearest
// listed ancestor, else its first listed descendant (a label on a wrapper or on a button's
// inner span). listed holds the backend node ids of the outline's elements.
func readLabels(raw []byte, listed map[int64]bool) (labels, error) {
	var r struct {
		Documents []struct {
			Nodes struct {
				ParentIndex   []int   `json:"parentIndex"`
				BackendNodeID []int64 `json:"backendNodeId"`
				Attributes    [][]int `json:"attributes"`
			} `json:"nodes"`
		} `json:"documents"`
		Strings []string `json:"strings"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return labels{}, fmt.Errorf("labels: %w", err)
	}
	str := func(i int) string {
		if i < 0 || i >= len(r.Strings) {
			return ""
		}
		return r.Strings[i]
	}
	l := labels{scoring: map[int64]string{}, submit: map[int64]bool{}}
	for _, d := range r.Documents {
		n := d.Nodes
		end := make([]int, len(n.ParentIndex)) // one past the last node of i's subtree
		for i := range end {
			end[i] = i + 1
		}
		for i := len(end) - 1; i > 0; i-- {
			if p := n.ParentIndex[i]; p >= 0 && end[i] > end[p] {
				end[p] = end[i]
			}
		}
		target := func(i int) (int64, bool) {
			for j := i; j >= 0; j = n.ParentIndex[j] {
				if listed[n.BackendNodeID[j]] {
					return n.BackendNodeID[j], true
				}
			}
			for j := i + 1; j < end[i]; j++ {
				if listed[n.BackendNodeID[j]] {
					return n.BackendNodeID[j], true
				}
			}
			return 0, false
		}
		for i, a := range n.Attributes {
			for k := 0; k+1 < len(a); k += 2 {
				switch strings.ToLower(str(a[k])) {
				case "data-manual-scoring":
					// Fields are labelled on themselves: no moving to a neighbour.
					if listed[n.BackendNodeID[i]] {
						l.scoring[n.BackendNodeID[i]] = str(a[k+1])
					}
				case "data-manual-submit":
					if id, ok := target(i); ok {
						l.submit[id] = true
					}
				}
			}
		}
	}
	return l, nil
}

// isAccountLabel and isPasswordLabel say what a sign-in takes from a label.
func isAccountLabel(s string) bool {
	switch s {
	case "username", "emailAddress", "username OR emailAddress", "phone":
		return true
	}
	return false
}

func isPasswordLabel(s string) bool { return s == "password" || s == "password.current" }
