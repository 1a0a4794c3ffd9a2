package commands

import (
	"encoding/json"
	"errors"
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

// TestSettingsRefused: a setting below 0 or not a whole number is
// args.invalid naming the setting and what it counts, and changes nothing.
func TestSettingsRefused(t *testing.T) {
	svc := service.New(workspace.Options{StateDir: t.TempDir()}, service.OneShot)
	defer svc.Close()
	for _, tc := range []struct{ settings, want string }{
		{`{"stallTurns":-1}`, "initializationOptions.settings.stallTurns must be a whole number of turns, 0 or more (0 turns it off), got -1"},
		{`{"todoReminderSteps":2.5}`, "initializationOptions.settings.todoReminderSteps must be a whole number of steps, 0 or more (0 turns it off), got 2.5"},
	} {
		cl := NewClient(svc, Defaults{Settings: reminder.DefaultSettings()})
		_, err := cl.Configure(json.RawMessage(`{"settings":` + tc.settings + `}`))
		var coded interface{ ErrorCode() string }
		if err == nil || !errors.As(err, &coded) || coded.ErrorCode() != "args.invalid" || err.Error() != tc.want {
			t.Errorf("%s: %v, want args.invalid %q", tc.settings, err, tc.want)
		}
		if got := cl.Defaults().Settings; got != reminder.DefaultSettings() {
			t.Errorf("%s changed the settings to %+v", tc.settings, got)
		}
		cl.Close()
	}
}
