package commands

import (
	"encoding/json"
	"testing"

	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// TestSettingsReference fails when the settings table of docs/commands.md
// or of docs/runtime.md §1.1 drifts from reminder.SettingsTable and
// reminder.DefaultSettings: those tables are the only places of the docs
// that state the defaults.
func TestSettingsReference(t *testing.T) {
	for _, path := range []string{"../docs/commands.md", "../docs/runtime.md"} {
		checkGenerated(t, path, "TestSettingsReference", SettingsReference())
	}
}

// TestSettingsTableDecoded: every setting of the table is decoded into its
// own field, by initializationOptions and by didChangeConfiguration; the
// values here are not the defaults.
func TestSettingsTableDecoded(t *testing.T) {
	svc := service.New(workspace.Options{StateDir: t.TempDir()}, service.OneShot)
	defer svc.Close()
	for i, st := range reminder.SettingsTable() {
		for _, how := range []string{"initializationOptions", "didChangeConfiguration"} {
			cl := NewClient(svc, Defaults{Settings: reminder.Settings{TodoReminderSteps: 100, TodoReminderInterval: 100}})
			value := 3 + i
			settings, _ := json.Marshal(map[string]int{st.Name: value})
			var err error
			if how == "initializationOptions" {
				_, err = cl.Configure(json.RawMessage(`{"settings":` + string(settings) + `}`))
			} else {
				_, err = cl.ConfigureSettings(json.RawMessage(`{"settings":{"agentd":` + string(settings) + `}}`))
			}
			if err != nil {
				t.Fatalf("%s %s: %v", how, settings, err)
			}
			want := reminder.Settings{TodoReminderSteps: 100, TodoReminderInterval: 100}
			*st.Field(&want) = value
			if got := cl.Defaults().Settings; got != want {
				t.Errorf("%s %s: settings %+v, want %+v", how, settings, got, want)
			}
			cl.Close()
		}
	}
}
