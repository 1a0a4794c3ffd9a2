package service

import "crypto/rand"

// The service's clock name is also this daemon's identity in team folders
// (the Owner of its turns, the RunBy of its checks, its live key). A daemon
// whose etcd lease was lost takes a new one before it writes again
// (docs/team.md, "Fencing"): what it recorded under the old one is then
// another process's, which the restart rule ends (recover.go). The
// monotonic base (start) stays: readings of one name always share it.

// clockID is the service's clock name now.
func (s *Service) clockID() string { return *s.clock.Load() }

// newClock gives the service a new clock name and returns it
// (workspace.Options.NewIdentity).
func (s *Service) newClock() string {
	id := rand.Text()
	s.clock.Store(&id)
	return id
}
