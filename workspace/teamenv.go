package workspace

// The environment variables of this machine's etcd settings (docs/team.md,
// "Configuration"), each the fallback of its flag; the password has no
// flag. Every one begins with TeamEnvPrefix, which a goal check's
// environment is stripped of (docs/runtime.md §2.10.2).
const (
	TeamEnvPrefix    = "AGENTD_ETCD_"
	EnvEtcdEndpoints = TeamEnvPrefix + "ENDPOINTS"
	EnvEtcdCACert    = TeamEnvPrefix + "CACERT"
	EnvEtcdCert      = TeamEnvPrefix + "CERT"
	EnvEtcdKey       = TeamEnvPrefix + "KEY"
	EnvEtcdUser      = TeamEnvPrefix + "USER"
	EnvEtcdPassword  = TeamEnvPrefix + "PASSWORD"
)
