-- Harness self-check (run by ci.sh, which expects every test here to FAIL quickly and
-- nvim to exit non-zero): a Lua error must fail a test, never hang the run.
test("an error raised by the test fails it", function()
  error("deliberate failure")
end)

test("an error raised in a scheduled callback fails the test", function()
  local ran = false
  vim.schedule(function()
    ran = true
    error("deliberate failure in a callback")
  end)
  vim.wait(1000, function()
    return ran
  end, 10)
  vim.wait(50)
end)

test("a timed-out wait fails the test", function()
  H.wait(function()
    return false
  end, "something that never happens", 200)
end)
