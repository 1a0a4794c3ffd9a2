-- Harness self-check: an error while loading a test file fails the run at once.
test("never runs", function() end)
error("deliberate error while loading the test file")
