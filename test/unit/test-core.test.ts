import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { createProgress } from '../../src/adapters/progress.js';
import { matchesDoctestFilter } from '../../src/core/test-cases.js';
import { classify, isBlocking, summarize } from '../../src/suite/baseline.js';
import {
  closeCaseNames,
  doctestFilterEscape,
  parseDoctestList,
  parseDoctestXml,
  type CaseResult,
} from '../../src/suite/doctest.js';
import { planOffline, type OfflineProbe } from '../../src/suite/offline-plan.js';

const XML = `<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="tests">
  <TestSuite>
    <TestCase name="test a &amp; b" filename="x.cpp" line="3">
      <OverallResultsAsserts successes="2" failures="0" test_case_success="true"/>
    </TestCase>
    <TestCase name="test fail" filename="x.cpp" line="8">
      <Expression success="false" type="CHECK_EQ" filename="x.cpp" line="9">
        <Original>
          f(1), 3
        </Original>
        <Expanded>
          2, 3
        </Expanded>
      </Expression>
      <OverallResultsAsserts successes="0" failures="1" test_case_success="false"/>
    </TestCase>
    <TestCase name="test throws" filename="y.cpp" line="1">
      <SubCase name="s" filename="y.cpp" line="2">
        <Exception crash="false">
          exception thrown in subcase - will translate later when the whole test case has been exited (cannot translate while there is an active exception)
        </Exception>
      </SubCase>
      <Exception crash="false">
        [load] bad &lt;file&gt;
      </Exception>
      <OverallResultsAsserts successes="0" failures="0" test_case_success="false"/>
    </TestCase>
    <TestCase name="test skipped" filename="y.cpp" line="9" skipped="true">
      <OverallResultsAsserts successes="0" failures="0" test_case_success="true"/>
    </TestCase>
  </TestSuite>
  <OverallResultsAsserts successes="2" failures="1"/>
  <OverallResultsTestCases successes="1" failures="2" skipped="1"/>
</doctest>`;

describe('parseDoctestXml', () => {
  it('reads cases, statuses, assertion counts and failure messages', () => {
    const run = parseDoctestXml(XML);
    expect(run.complete).toBe(true);
    expect(run.cases.map((c) => [c.name, c.status])).toEqual([
      ['test a & b', 'passed'],
      ['test fail', 'failed'],
      ['test throws', 'failed'],
      ['test skipped', 'skipped'],
    ]);
    expect(run.cases[0]?.assertions).toEqual({ passed: 2, failed: 0 });
    expect(run.cases[1]?.failures).toEqual([
      { file: 'x.cpp', line: 9, message: 'CHECK_EQ( f(1), 3 ) with values 2, 3' },
    ]);
    expect(run.cases[2]?.failures).toEqual([{ file: 'y.cpp', line: 1, message: 'exception: [load] bad <file>' }]);
  });
  it('marks the case that was running when the output stopped as crashed', () => {
    const cut = XML.slice(0, XML.indexOf('<Exception crash="false">\n        [load]'));
    const run = parseDoctestXml(cut);
    expect(run.complete).toBe(false);
    expect(run.interrupted).toBe('test throws');
    expect(run.cases.at(-1)).toMatchObject({ name: 'test throws', status: 'crashed' });
  });
  it('reads a reported crash', () => {
    const run = parseDoctestXml(
      '<doctest><TestSuite><TestCase name="c" filename="f" line="1"><Exception crash="true">SIGSEGV</Exception><OverallResultsAsserts successes="0" failures="0" test_case_success="false"/></TestCase></TestSuite><OverallResultsTestCases successes="0" failures="1"/></doctest>',
    );
    expect(run.cases[0]).toMatchObject({ status: 'crashed', failures: [{ message: 'crash: SIGSEGV' }] });
  });
  it('a case name made into a filter matches that case, as doctest reads filters (only \\, and \\\\ are escapes)', () => {
    for (const name of ['test a*b', 'test a?b', 'test [x] y', 'test a,b', 'test a\\b', 'test a\\,b', 'test *,?[]\\'])
      expect(matchesDoctestFilter(doctestFilterEscape(name), name), name).toBe(true);
    // A comma would split the filter in two, so it is escaped.
    expect(matchesDoctestFilter(doctestFilterEscape('test a,b'), 'test a')).toBe(false);
  });
});

const kase = (name: string, status: CaseResult['status']): CaseResult => ({
  name,
  file: 'f',
  line: 1,
  status,
  assertions: { passed: 1, failed: status === 'failed' ? 1 : 0 },
  failures: [],
});

describe('classify', () => {
  const baseline = [kase('a', 'passed'), kase('b', 'failed'), kase('c', 'failed'), kase('d', 'passed')];
  const patched = [
    kase('a', 'failed'),
    kase('b', 'failed'),
    kase('c', 'passed'),
    kase('d', 'passed'),
    kase('n1', 'passed'),
    kase('n2', 'crashed'),
    kase('s', 'skipped'),
  ];
  it('sorts every case against the baseline', () => {
    const result = classify(patched, baseline);
    expect(Object.fromEntries(result.map((c) => [c.name, c.classification]))).toEqual({
      a: 'new-failure',
      b: 'pre-existing-failure',
      c: 'fixed',
      d: 'passed',
      n1: 'new-test-passed',
      n2: 'new-test-failed',
      s: 'skipped',
    });
    expect(result.filter(isBlocking).map((c) => c.name)).toEqual(['a', 'n2']);
    expect(summarize(result)).toMatchObject({
      cases: 7,
      passed: 3,
      failed: 3,
      skipped: 1,
      byClass: { 'new-failure': 1, fixed: 1 },
    });
  });
  it('without a baseline counts every failure as new', () => {
    expect(classify([kase('b', 'failed')], null)[0]?.classification).toBe('new-failure');
  });
});

describe('planOffline', () => {
  const probe = (over: Partial<OfflineProbe> = {}): OfflineProbe => ({
    platform: 'linux',
    depsDir: null,
    depsDirHas: new Set(),
    system: { nlohmannJson: true, doctest: true, fmt: true },
    generatedRoot: '/cache/deps',
    ...over,
  });
  it('maps system packages and turns GGUF off', () => {
    const plan = planOffline(probe());
    expect(plan.missing).toEqual([]);
    expect(plan.cmakeArgs).toEqual([
      '-DFETCHCONTENT_FULLY_DISCONNECTED=ON',
      '-DFETCHCONTENT_SOURCE_DIR_JSON=/cache/deps/json',
      '-DFETCHCONTENT_SOURCE_DIR_DOCTEST=/cache/deps/doctest',
      '-DUSE_SYSTEM_FMT=ON',
      '-DMLX_BUILD_GGUF=OFF',
    ]);
    expect(plan.notes.join()).toContain('GGUF is off');
  });
  it('prefers --deps-dir folders, including gguflib', () => {
    const plan = planOffline(probe({ depsDir: '/d', depsDirHas: new Set(['fmt', 'gguflib']) }));
    expect(plan.deps.find((d) => d.dep === 'fmt')?.cmakeArgs).toEqual(['-DFETCHCONTENT_SOURCE_DIR_FMT=/d/fmt']);
    expect(plan.deps.find((d) => d.dep === 'gguflib')?.cmakeArgs).toEqual([
      '-DFETCHCONTENT_SOURCE_DIR_GGUFLIB=/d/gguflib',
    ]);
  });
  it('names what is missing and how to get it', () => {
    const plan = planOffline(probe({ system: { nlohmannJson: false, doctest: true, fmt: false }, platform: 'darwin' }));
    expect(plan.missing.map((m) => m.dep)).toEqual(['json', 'fmt', 'metal_cpp']);
    expect(plan.missing[0]?.fix).toContain('nlohmann-json3-dev');
  });
});

describe('progress', () => {
  it('prints sparse plain lines when not a terminal', () => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    const progress = createProgress(stream, 'build', () => 0);
    for (let i = 1; i <= 100; i++) progress.line(`[${i}/100] Building CXX object x${i}.o`);
    progress.line('not a ninja line');
    expect(text.trim().split('\n')).toHaveLength(11);
    expect(text).toContain('build: 100/100 (100%)');
  });
  it('says how long is left from the rate so far, once the rate means something', () => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    let clock = 0;
    const progress = createProgress(stream, 'build', () => clock);
    // 10 steps of 2 s each: 990 steps left after 20 s at 0.5 steps/s is about 33 min.
    progress.line('[1/1000] Building CXX object a.o');
    clock = 20_000;
    progress.line('[11/1000] Building CXX object b.o');
    clock = 200_000;
    progress.line('[101/1000] Building CXX object c.o');
    expect(text).toContain('build: 101/1000 (10%), about 30 min left\n');
    // A build that is done says nothing of time.
    clock = 400_000;
    progress.line('[1000/1000] Linking CXX executable tests');
    expect(text).toContain('build: 1000/1000 (100%)\n');
  });

  it('shows the time left on a terminal too', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 120 });
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    let clock = 0;
    const progress = createProgress(stream, 'build', () => clock);
    progress.line('[1/100] Building CXX object a.o');
    clock = 30_000;
    progress.line('[51/100] Building CXX object b.o');
    expect(text).toContain('51/100, about 30 s left b.o');
  });

  it('draws a bar on a terminal', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    createProgress(stream, 'build').line('[5/10] Building CXX object a.o');
    expect(text).toContain('[###############---------------] 5/10 a.o');
  });
});

describe('doctest case names', () => {
  it('reads the names from --list-test-cases XML', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<doctest binary="./t">
  <Options order_by="file" rand_seed="0"/>
  <TestCase name="test add" filename="t.cpp" line="3" skipped="false"/>
  <TestCase name="test a &amp; b" filename="t.cpp" line="4" skipped="false"/>
  <OverallResultsTestCases unskipped="2"/>
</doctest>`;
    expect(parseDoctestList(xml)).toEqual(['test add', 'test a & b']);
  });

  it('finds names close to a filter that matched nothing: shared words, typos, camel case', () => {
    const names = [
      'test add',
      'test known failure',
      'test MetalStorageView adds',
      'test metal storage export status',
      'test arange',
    ];
    expect(closeCaseNames('*storge view*', names)).toEqual([
      'test MetalStorageView adds',
      'test metal storage export status',
    ]);
    expect(closeCaseNames('*matrix*', names)).toEqual([]);
    expect(closeCaseNames('*unknown*', names)).toEqual(['test known failure']);
    expect(closeCaseNames('*', names)).toEqual([]);
    expect(closeCaseNames('test ad', names, 2)).toEqual(['test MetalStorageView adds', 'test add']);
  });

  it('orders names of equal closeness by code units, as git orders names: the same in every locale', () => {
    // localeCompare gives a, b, B in English (small letters first); another locale may order them otherwise.
    expect(closeCaseNames('*view*', ['test b view', 'test B view', 'test other', 'test a view'])).toEqual([
      'test B view',
      'test a view',
      'test b view',
    ]);
  });
});
