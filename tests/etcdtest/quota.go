package etcdtest

// WithQuota sets each member's database quota (etcd's
// --quota-backend-bytes) to bytes: a member whose database reaches it
// raises the NOSPACE alarm and refuses every write until the alarm is
// disarmed. 0 keeps etcd's default (2 GiB).
func WithQuota(bytes int64) Option { return func(c *Cluster) { c.quota = bytes } }
