package workspace

// The identity of this process in the teams of its folders
// (Options.Identity): its live key under a lease, the Owner of the turns it
// drives. A store whose lease was lost registers again under a new one
// (docs/team.md, "Fencing"); every team folder of the process then takes
// it, as each finds its own lease lost.

// Identity is the name of this process in team folders now.
func (r *Registry) Identity() string {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	return r.id
}

// newIdentity gives the process a new identity in place of old
// (etcdstore.Options.NewIdentity): the first store of a pause whose lease
// went asks Options.NewIdentity; the others find it done and take the same.
// Without Options.NewIdentity the identity stays.
func (r *Registry) newIdentity(old string) string {
	r.idMu.Lock()
	defer r.idMu.Unlock()
	if r.id == old && r.opts.NewIdentity != nil {
		r.id = r.opts.NewIdentity()
	}
	return r.id
}
