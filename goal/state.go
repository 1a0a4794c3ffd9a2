package goal

// State is everything the goal runtime keeps for one session. It is stored
// as JSON by the workspace package.
// PLACEHOLDER: the goal package's owner replaces this with the real fields.
type State struct{}
