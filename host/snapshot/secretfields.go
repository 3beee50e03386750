package snapshot

// SecretField is a field of a page that holds a value a person keeps secret: an input whose
// value an outline never lists (build.go's secretField: a password by its type, autocomplete,
// name or id, a one-time code, a card number). The host treats
// what a person typed into one during a hand-over as it treats a password it typed itself
// (host/handover.go).
type SecretField struct {
	BackendNodeID int64
	FrameID       string // the CDP frame id of the field's document
	Value         string
}

// SecretFields lists the secret fields of raw (a DOMSnapshot.captureSnapshot result: the
// page's document and its same-process frames) that hold a value, and the inputs of also
// (backend node ids: fields seen as secret before, which the page may have turned into text
// fields since) that do. The caller zeroes raw.
func SecretFields(raw []byte, also map[int64]bool) ([]SecretField, error) {
	s, err := decode(raw)
	if err != nil {
		return nil, err
	}
	var out []SecretField
	for _, d := range s.docs {
		for i := 0; i < d.n; i++ {
			if d.tag(i) != tagInput || !secretField(d, i) && !also[int64(d.backend[i])] {
				continue
			}
			if v, ok := d.inputValue[i]; ok && s.str(v) != "" {
				out = append(out, SecretField{BackendNodeID: int64(d.backend[i]), FrameID: d.frameID, Value: s.str(v)})
			}
		}
	}
	return out, nil
}
