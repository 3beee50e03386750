package vault

// DropConnForTest marks the store's current connection unusable, as a classified bus error
// does: the next call connects again.
func DropConnForTest(s *SecretService) {
	s.mu.Lock()
	c := s.cur
	s.mu.Unlock()
	if c != nil {
		s.invalidate(c)
	}
}
