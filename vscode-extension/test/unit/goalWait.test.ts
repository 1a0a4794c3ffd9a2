// Unit tests of Wait…'s input checks and args (src/goalWait.ts), run with `node --test`.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { goalWaitArgs, parseWaitTime, validateWaitNote, validateWaitPath, validateWaitTime } from '../../src/goalWait';
import { LIMITS } from '../../src/protocol.gen';

describe('parseWaitTime (as :AgentdGoalWait reads its first word)', () => {
  it('reads durations as for and times of day as until', () => {
    assert.deepEqual(parseWaitTime('30m'), { for: '30m' });
    assert.deepEqual(parseWaitTime(' 2h30m '), { for: '2h30m' });
    assert.deepEqual(parseWaitTime('90s'), { for: '90s' });
    assert.deepEqual(parseWaitTime('1.5h'), { for: '1.5h' });
    assert.deepEqual(parseWaitTime('14:00'), { until: '14:00' });
    assert.deepEqual(parseWaitTime('9:30'), { until: '9:30' });
  });

  it('reads nothing else', () => {
    for (const text of ['', 'soon', '30', 'm30', 'build/out.log', '2026-03-01T14:00:00Z', '30 m']) {
      assert.equal(parseWaitTime(text), undefined, text);
    }
  });
});

describe('validateWaitTime', () => {
  it('accepts what agentd reads', () => {
    for (const text of ['30m', '2h30m', '90s', '1.5h', '1s', '500ms1s', '14:00', '9:05', '23:59', '0:00']) {
      assert.equal(validateWaitTime(text), undefined, text);
    }
  });

  it('names the problem', () => {
    assert.match(validateWaitTime('') ?? '', /Type a duration/);
    assert.match(validateWaitTime('soon') ?? '', /"soon" is neither a duration .* nor a time of day/);
    assert.match(validateWaitTime('30') ?? '', /neither a duration/);
    assert.match(validateWaitTime('3hm') ?? '', /"3hm" is not a duration; write it as 90s/);
    assert.match(validateWaitTime('1.2.3m') ?? '', /is not a duration/);
    assert.match(validateWaitTime('500ms') ?? '', /"500ms" is shorter than 1 second/);
    assert.match(validateWaitTime('0s') ?? '', /shorter than 1 second/);
    assert.match(validateWaitTime('14:0') ?? '', /"14:0" is not a time of day; write it as 14:00/);
    assert.match(validateWaitTime('14:00:30') ?? '', /is not a time of day/);
    assert.match(validateWaitTime('24:00') ?? '', /hours go to 23/);
    assert.match(validateWaitTime('12:60') ?? '', /minutes to 59/);
  });
});

describe('validateWaitPath', () => {
  it('accepts workspace-relative paths, existing or not', () => {
    for (const text of ['build/out.log', 'results/', 'a.txt', '.', 'src\\x.go', 'a..b']) {
      assert.equal(validateWaitPath(text), undefined, text);
    }
  });

  it('names the problem', () => {
    assert.match(validateWaitPath('  ') ?? '', /Type a file or folder/);
    assert.match(validateWaitPath('/etc/passwd') ?? '', /"\/etc\/passwd" is not relative to the workspace folder/);
    assert.match(validateWaitPath('C:\\x') ?? '', /not relative/);
    assert.match(validateWaitPath('../other/x') ?? '', /goes up with "\.\."/);
    assert.match(validateWaitPath('a/../../x') ?? '', /goes up/);
  });
});

describe('validateWaitNote', () => {
  it('takes a blank note and one of the limit, refuses a longer one', () => {
    assert.equal(validateWaitNote(''), undefined);
    assert.equal(validateWaitNote('é'.repeat(LIMITS.maxReasonChars)), undefined);
    assert.match(validateWaitNote('x'.repeat(LIMITS.maxReasonChars + 1)) ?? '', new RegExp(`${LIMITS.maxReasonChars + 1} characters long; at most ${LIMITS.maxReasonChars}`));
  });
});

describe('goalWaitArgs (the args of agentd.goal.wait)', () => {
  it('one condition, the trimmed note, the wall-clock mode', () => {
    assert.deepEqual(goalWaitArgs({ for: '30m' }, '  CI  ', 'counts'), { for: '30m', note: 'CI', wallClock: 'counts' });
    assert.deepEqual(goalWaitArgs({ until: '14:00' }, '', 'stops'), { until: '14:00', wallClock: 'stops' });
    assert.deepEqual(goalWaitArgs({ checkPasses: true }, ' ', 'counts'), { checkPasses: true, wallClock: 'counts' });
  });

  it('paths trimmed, with / as separator', () => {
    assert.deepEqual(goalWaitArgs({ paths: [' build\\out.log '] }, '', 'counts'), { paths: ['build/out.log'], wallClock: 'counts' });
  });

  it('a typed time goes to the args as parsed', () => {
    assert.deepEqual(goalWaitArgs(parseWaitTime('2h30m') ?? {}, 'after lunch', 'stops'), { for: '2h30m', note: 'after lunch', wallClock: 'stops' });
  });
});
