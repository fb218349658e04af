// BootTracker on synthetic launches (see event_builders.hpp for their shape).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "event_builders.hpp"
#include "model/boot_tracker.hpp"
#include "model/summary.hpp"

namespace hacoboot {
namespace {

using test::Launch;
using test::RecordingTracker;

using Config = BootTracker::Config;
const Config kAppCommand{.command = "/bin/app"};

const BootRecord* find_boot(const std::vector<BootRecord>& done, std::uint32_t hpid) {
  const auto it = std::find_if(done.begin(), done.end(), [hpid](const BootRecord& b) { return b.hpid == hpid; });
  return it == done.end() ? nullptr : &*it;
}

std::vector<std::uint32_t> hpids_of(const std::vector<BootRecord>& done) {
  std::vector<std::uint32_t> hpids;
  for (const auto& b : done) hpids.push_back(b.hpid);
  return hpids;
}

// Replaces the events matching `pred` by `replacement` (in place, first match).
template <typename Pred>
void replace_first(std::vector<Event>& events, Pred pred, std::vector<Event> replacement) {
  const auto it = std::find_if(events.begin(), events.end(), pred);
  ASSERT_NE(it, events.end());
  const auto pos = events.erase(it);
  events.insert(pos, replacement.begin(), replacement.end());
}

bool is_listen(const Event& e) {
  return e.kind == EventKind::Listen;
}
bool is_exec(const Event& e) {
  return e.kind == EventKind::Exec;
}

TEST(BootTracker, NormalBootGivesOneRecordWithItsFigures) {
  const Launch l;
  RecordingTracker rt(kAppCommand);
  auto events = l.events();
  const std::vector<Event> last_two(events.end() - 2, events.end());  // supervisor and CLI exit
  events.resize(events.size() - 2);

  rt.feed(events);
  EXPECT_TRUE(rt.done().empty()) << "the boot ends only when its supervisor exits";
  EXPECT_EQ(rt.tracker().live_boots(), 1u);
  rt.feed(last_two);

  ASSERT_EQ(rt.done().size(), 1u);
  const auto& b = rt.done()[0];
  EXPECT_EQ(b.sequence, 1u);
  EXPECT_EQ(b.hpid, l.supervisor);
  EXPECT_EQ(b.container_pid, l.container);
  EXPECT_EQ(b.cgroup_id, l.cgroup_id);
  EXPECT_EQ(b.start_phase, 1);
  EXPECT_EQ(b.start_ns, l.sv_start());
  EXPECT_EQ(b.execve_ns, l.execve());
  EXPECT_EQ(b.listen_ns, l.listen());
  EXPECT_EQ(b.container_exit_ns, l.container_exit());
  EXPECT_EQ(b.end, BootEnd::Exited);
  EXPECT_TRUE(b.complete());
  EXPECT_EQ(b.since_start(*b.execve_ns), 4'000u);
  EXPECT_EQ(b.since_start(*b.listen_ns), 8'000u);
  EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases());
  EXPECT_EQ(b.phases.front(), (PhaseMark{0, l.cli_start()})) << "the CLI's phase 0, linked by its fork";
  EXPECT_EQ(b.phases.back().phase, 6);
  EXPECT_EQ(rt.tracker().live_boots(), 0u);
  EXPECT_EQ(rt.tracker().settled_boots(), 1u);
}

TEST(BootTracker, PhaseZeroIsLinkedOnlyThroughTheCliForkOfTheSupervisor) {
  const Launch l;
  auto events = l.events();
  // Without the CLI's fork (say, lost), nothing ties its phase 0 to the boot.
  std::erase_if(events, [](const Event& e) { return e.kind == EventKind::Fork && e.role == Role::Untracked; });
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].phases.front().phase, 1);
  EXPECT_EQ(rt.done()[0].start_ns, l.sv_start());
}

TEST(BootTracker, FromCliStartClocksFromTheCliPhaseZero) {
  const Launch l;
  RecordingTracker rt({.start_phase = 0, .command = "/bin/app"});
  rt.feed(l.events());
  ASSERT_EQ(rt.done().size(), 1u);
  const auto& b = rt.done()[0];
  EXPECT_EQ(b.start_phase, 0);
  EXPECT_EQ(b.start_ns, l.cli_start());
  EXPECT_EQ(b.since_start(*b.execve_ns), 5'000u);
  EXPECT_EQ(b.since_start(*b.listen_ns), 9'000u);
  EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases());
}

TEST(BootTracker, FromContainerStartClocksFromPhase11) {
  const Launch l;
  RecordingTracker rt({.start_phase = 11, .command = "/bin/app"});
  rt.feed(l.events());
  ASSERT_EQ(rt.done().size(), 1u);
  const auto& b = rt.done()[0];
  EXPECT_EQ(b.start_phase, 11);
  EXPECT_EQ(b.start_ns, l.container_start());
  EXPECT_EQ(b.since_start(*b.execve_ns), 2'000u);
  EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases()) << "earlier phases are still recorded";

  Summary s;
  s.add(b);
  for (std::int64_t before : {0, 1, 2, 11}) {
    EXPECT_EQ(test::phase_since_start(s, before), nullptr) << "phase " << before;
  }
  ASSERT_NE(test::phase_since_start(s, 12), nullptr);
  EXPECT_EQ(test::phase_since_start(s, 12)->avg(), 100u);
  EXPECT_EQ(test::phase_since_start(s, 3)->avg(), 2'100u);
}

TEST(BootTracker, CommandFilterIgnoresOtherExecs) {
  const Launch l;
  auto events = l.events();
  // The container first runs a shell, which execs the app; then a worker
  // execs the app again: only the container's exec of the app counts.
  replace_first(events, is_exec,
                {ev::exec(l.execve() - 500, l.container, l.supervisor, "/bin/sh", Role::Container, 1),
                 ev::exec(l.execve(), l.container, l.supervisor, "/bin/app", Role::Container, l.cgroup_id),
                 ev::fork(l.execve() + 10, l.container, l.supervisor, 300, Role::Member),
                 ev::exec(l.execve() + 20, 300, l.supervisor, "/bin/app", Role::Member, 99)});
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].execve_ns, l.execve());
  EXPECT_EQ(rt.done()[0].cgroup_id, l.cgroup_id);
}

// The cgroup path the enrichment step put on an exec (the kernel sends only
// the id) is the boot's: that of the exec that counts, not of the others.
TEST(BootTracker, CountedExecGivesTheBootItsCgroupPath) {
  const Launch l;
  auto events = l.events();
  const auto in_cgroup = [](Event exec, const char* path) {
    exec.cgroup_path = path;
    return exec;
  };
  replace_first(events, is_exec,
                {in_cgroup(ev::exec(l.execve() - 500, l.container, l.supervisor, "/bin/sh", Role::Container, 1), "/sh"),
                 in_cgroup(ev::exec(l.execve(), l.container, l.supervisor, "/bin/app", Role::Container, l.cgroup_id),
                           "/haconiwa/app")});
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].cgroup_path, "/haconiwa/app");
}

TEST(BootTracker, CommandNeverExecdLeavesTheBootWithoutExecve) {
  const Launch l;
  RecordingTracker rt({.command = "/u/app/bin/rails"});
  rt.feed(l.events());
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].execve_ns, std::nullopt);
  EXPECT_EQ(rt.done()[0].listen_ns, l.listen());
  EXPECT_FALSE(rt.done()[0].complete());
}

TEST(BootTracker, WithoutCommandTheFirstExecCounts) {
  const Launch l;
  auto events = l.events();
  replace_first(events, is_exec,
                {ev::exec(l.execve() - 500, l.container, l.supervisor, "/bin/sh"),
                 ev::exec(l.execve(), l.container, l.supervisor, "/bin/app")});
  RecordingTracker rt({.command = ""});
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].execve_ns, l.execve() - 500);
}

TEST(BootTracker, ListenFromAGrandchildCounts) {
  const Launch l;
  auto events = l.events();
  const std::uint32_t worker = 300, grandchild = 301;
  replace_first(events, is_listen,
                {ev::fork(l.listen() - 200, l.container, l.supervisor, worker, Role::Member),
                 ev::fork(l.listen() - 100, worker, l.supervisor, grandchild, Role::Member),
                 ev::listen(l.listen(), grandchild, l.supervisor, Role::Member),
                 ev::exit(l.listen() + 100, grandchild, l.supervisor, Role::Member),
                 ev::exit(l.listen() + 200, worker, l.supervisor, Role::Member)});
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].listen_ns, l.listen());
  EXPECT_EQ(rt.done()[0].container_pid, l.container) << "a member's fork is no container";
}

// A thread made while the boot runs (here the listener) is known from its
// clone: where the critical path through it comes from. It is no process of
// the launch: the container stays the container.
TEST(BootTracker, AThreadsCloneGivesItsCreatorAndTime) {
  const Launch l;
  auto events = l.events();
  const std::uint32_t listener = 202;
  Event clone = ev::fork(l.listen() - 300, l.container, l.supervisor, listener, Role::Container);
  clone.kind = EventKind::Thread;
  clone.tid = l.container;
  clone.sched = SchedTotals{.cpu = 700};
  Event listen = ev::listen(l.listen(), l.container, l.supervisor);
  listen.tid = listener;
  listen.sched = SchedTotals{.cpu = 300};
  replace_first(events, is_listen, {clone, listen});
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  const BootRecord& boot = rt.done()[0];
  EXPECT_EQ(boot.container_pid, l.container) << "a thread is no container";
  EXPECT_EQ(boot.listen_tid, listener);
  const auto thread = std::find_if(boot.threads.begin(), boot.threads.end(),
                                   [&](const ThreadTimeline& t) { return t.tid == listener; });
  ASSERT_NE(thread, boot.threads.end());
  EXPECT_EQ(thread->parent_tid, l.container);
  EXPECT_EQ(thread->created_ns, l.listen() - 300);
}

TEST(BootTracker, OnlyTheFirstListenCounts) {
  const Launch l;
  auto events = l.events();
  replace_first(events, is_listen,
                {ev::listen(l.listen(), l.container, l.supervisor),
                 ev::fork(l.listen() + 10, l.container, l.supervisor, 300, Role::Member),
                 ev::listen(l.listen() + 20, 300, l.supervisor, Role::Member),
                 ev::listen(l.listen() + 30, l.container, l.supervisor)});
  RecordingTracker rt(kAppCommand);
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].listen_ns, l.listen());
  EXPECT_EQ(rt.tracker().settled_boots(), 1u);
}

TEST(BootTracker, InterleavedConcurrentBootsAreKeptApart) {
  const Launch a{.cli = 100, .supervisor = 200, .container = 201, .t0 = 1'000'000, .cgroup_id = 1};
  const Launch b{.cli = 110, .supervisor = 210, .container = 211, .t0 = 1'000'500, .cgroup_id = 2};
  RecordingTracker rt(kAppCommand);
  rt.feed(test::merge_by_time({a.events(), b.events()}));

  ASSERT_EQ(rt.done().size(), 2u);
  for (const auto* l : {&a, &b}) {
    SCOPED_TRACE("boot of supervisor " + std::to_string(l->supervisor));
    const auto* boot = find_boot(rt.done(), l->supervisor);
    ASSERT_NE(boot, nullptr);
    EXPECT_EQ(boot->container_pid, l->container);
    EXPECT_EQ(boot->cgroup_id, l->cgroup_id);
    EXPECT_EQ(boot->start_ns, l->sv_start());
    EXPECT_EQ(boot->execve_ns, l->execve());
    EXPECT_EQ(boot->listen_ns, l->listen());
    EXPECT_EQ(boot->container_exit_ns, l->container_exit());
    EXPECT_EQ(boot->phases.front(), (PhaseMark{0, l->cli_start()}));
    EXPECT_EQ(test::phase_numbers(*boot), test::full_launch_phases());
  }
  EXPECT_EQ(find_boot(rt.done(), a.supervisor)->sequence, 1u);
  EXPECT_EQ(find_boot(rt.done(), b.supervisor)->sequence, 2u);
}

TEST(BootTracker, SupervisorExitingFirstWaitsForTheContainer) {
  const Launch l;
  RecordingTracker rt(kAppCommand);
  rt.feed(l.events_until_listen());
  rt.feed(ev::exit(l.sv_exit(), l.supervisor, l.supervisor, Role::Launcher));
  EXPECT_TRUE(rt.done().empty()) << "the container child still runs";
  EXPECT_EQ(rt.tracker().live_boots(), 1u);

  rt.feed(ev::exit(l.sv_exit() + 5'000, l.container, l.supervisor, Role::Container));
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].end, BootEnd::Exited);
  EXPECT_EQ(rt.done()[0].container_exit_ns, l.sv_exit() + 5'000);
}

TEST(BootTracker, MemberAndCliExitsDoNotEndTheBoot) {
  const Launch l;
  RecordingTracker rt(kAppCommand);
  rt.feed(l.events_until_listen());
  rt.feed({ev::fork(l.listen() + 10, l.container, l.supervisor, 300, Role::Member),
           ev::exit(l.listen() + 20, 300, l.supervisor, Role::Member),
           ev::exit(l.listen() + 30, l.cli, l.cli, Role::Launcher)});  // CLI gone early (daemonized)
  EXPECT_TRUE(rt.done().empty());
  rt.feed({ev::exit(l.container_exit(), l.container, l.supervisor, Role::Container)});
  EXPECT_TRUE(rt.done().empty()) << "the supervisor still runs";
  rt.feed({ev::exit(l.sv_exit(), l.supervisor, l.supervisor, Role::Launcher)});
  EXPECT_EQ(rt.done().size(), 1u);
}

TEST(BootTracker, ContainerDyingBeforeExecGivesAnIncompleteBoot) {
  const std::uint32_t cli = 100, sv = 200, child = 201;
  RecordingTracker rt(kAppCommand);
  rt.feed({ev::phase(1'000, cli, cli, 0), ev::fork(1'100, cli, cli, sv, Role::Untracked), ev::phase(2'000, sv, sv, 1),
           ev::phase(3'000, sv, sv, 2), ev::fork(3'100, sv, sv, child, Role::Container),
           ev::phase(4'000, child, sv, 11), ev::phase(4'100, child, sv, 12), ev::phase(4'200, child, sv, 13),
           ev::exit(4'300, child, sv, Role::Container), ev::exit(5'000, sv, sv, Role::Launcher)});
  ASSERT_EQ(rt.done().size(), 1u);
  const auto& b = rt.done()[0];
  EXPECT_TRUE(b.started());
  EXPECT_FALSE(b.complete());
  EXPECT_EQ(b.execve_ns, std::nullopt);
  EXPECT_EQ(b.listen_ns, std::nullopt);
  EXPECT_EQ(b.phases.back().phase, 13) << "how far it got";
  EXPECT_EQ(b.container_exit_ns, 4'300u);
  EXPECT_EQ(b.end, BootEnd::Exited);
  EXPECT_EQ(rt.tracker().settled_boots(), 1u) << "an ended boot counts for --count";

  Summary s;
  s.add(b);
  EXPECT_EQ(s.boots().started, 1u);
  EXPECT_EQ(s.boots().execve, 0u);
  EXPECT_EQ(s.boots().incomplete, 1u);
}

TEST(BootTracker, BootSeenOnlyAfterItsStartIsUnstarted) {
  // Tracing began after phases 0-2 and the container fork.
  const std::uint32_t sv = 200, child = 201;
  RecordingTracker rt(kAppCommand);
  rt.feed({ev::phase(4'000, child, sv, 12), ev::exec(5'000, child, sv, "/bin/app"), ev::listen(6'000, child, sv),
           ev::exit(7'000, child, sv, Role::Container), ev::exit(8'000, sv, sv, Role::Launcher)});
  ASSERT_EQ(rt.done().size(), 1u);
  const auto& b = rt.done()[0];
  EXPECT_FALSE(b.started());
  EXPECT_EQ(b.end, BootEnd::Exited);
  EXPECT_EQ(b.execve_ns, 5'000u);
  EXPECT_EQ(rt.tracker().settled_boots(), 0u) << "unstarted boots are in no figure, nor in --count";
  Summary s;
  s.add(b);
  EXPECT_EQ(s.boots().unstarted, 1u);
  EXPECT_EQ(s.boots().started, 0u);
}

TEST(BootTracker, SecondStartOfALiveHpidReplacesTheFirstBoot) {
  // The first launch's exits were lost; its supervisor pid is then reused.
  const Launch first{.cli = 100, .supervisor = 200, .container = 201, .t0 = 1'000'000};
  const Launch second{.cli = 120, .supervisor = 200, .container = 221, .t0 = 2'000'000};
  RecordingTracker rt(kAppCommand);
  rt.feed(first.events_until_listen());
  auto events = second.events();
  const auto start = std::find_if(events.begin(), events.end(),
                                  [](const Event& e) { return e.kind == EventKind::Phase && e.phase == 1; });
  rt.feed(std::vector<Event>(events.begin(), start));
  EXPECT_TRUE(rt.done().empty());
  rt.feed(*start);
  ASSERT_EQ(rt.done().size(), 1u) << "the first boot ends at the second's start";
  EXPECT_EQ(rt.done()[0].end, BootEnd::Replaced);
  EXPECT_EQ(rt.done()[0].container_pid, first.container);
  EXPECT_EQ(rt.done()[0].listen_ns, first.listen());

  rt.feed(std::vector<Event>(std::next(start), events.end()));
  ASSERT_EQ(rt.done().size(), 2u);
  const auto& b = rt.done()[1];
  EXPECT_EQ(b.sequence, 2u);
  EXPECT_EQ(b.end, BootEnd::Exited);
  EXPECT_EQ(b.container_pid, second.container);
  EXPECT_EQ(b.start_ns, second.sv_start());
  EXPECT_EQ(b.execve_ns, second.execve());
  EXPECT_EQ(b.listen_ns, second.listen());
  EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases());
  EXPECT_EQ(b.phases.front(), (PhaseMark{0, second.cli_start()}));
}

// The same hpid reuse, whatever phase starts the clock: a reused supervisor
// pid begins a new launch at its phase 1, and the two launches must stay apart.
class HpidReuse : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(HpidReuse, KeepsBothLaunchesApartWhateverTheStartPhase) {
  const Launch first{.cli = 100, .supervisor = 200, .container = 201, .t0 = 1'000'000};
  const Launch second{.cli = 120, .supervisor = 200, .container = 221, .t0 = 2'000'000};
  RecordingTracker rt({.start_phase = GetParam(), .command = "/bin/app"});
  rt.feed(first.events_until_listen());  // its exits were lost
  rt.feed(second.events());

  ASSERT_EQ(rt.done().size(), 2u) << "BUG: the second launch was merged into the first";
  const auto& a = rt.done()[0];
  const auto& b = rt.done()[1];
  EXPECT_EQ(a.end, BootEnd::Replaced);
  EXPECT_EQ(a.container_pid, first.container) << "BUG: the second launch's container fork went to the first boot";
  EXPECT_EQ(a.execve_ns, first.execve());
  EXPECT_EQ(b.end, BootEnd::Exited);
  EXPECT_EQ(b.container_pid, second.container);
  EXPECT_EQ(b.execve_ns, second.execve());
  EXPECT_EQ(b.listen_ns, second.listen());
  EXPECT_EQ(test::phase_numbers(b), test::full_launch_phases()) << "BUG: phases of the second launch were lost";
}

INSTANTIATE_TEST_SUITE_P(StartPhases, HpidReuse, ::testing::Values(1, 0, 11),
                         [](const ::testing::TestParamInfo<std::int64_t>& p) {
                           return "from_phase_" + std::to_string(p.param);
                         });

TEST(BootTracker, FinishAllHandsOverInFlightBootsInStartOrder) {
  RecordingTracker rt(kAppCommand);
  const std::vector<std::uint32_t> supervisors{300, 100, 200, 7, 5000};
  std::uint64_t t0 = 1'000'000;
  for (const auto sv : supervisors) {
    rt.feed(Launch{.cli = sv + 1'000'000, .supervisor = sv, .container = sv + 1, .t0 = t0}.events_until_listen());
    t0 += 100'000;
  }
  EXPECT_TRUE(rt.done().empty());
  EXPECT_EQ(rt.tracker().live_boots(), supervisors.size());

  rt.tracker().finish_all();
  EXPECT_EQ(hpids_of(rt.done()), supervisors);
  for (std::size_t i = 0; i < rt.done().size(); ++i) {
    EXPECT_EQ(rt.done()[i].sequence, i + 1);
    EXPECT_EQ(rt.done()[i].end, BootEnd::TracingStopped);
    EXPECT_TRUE(rt.done()[i].complete());
  }
  EXPECT_EQ(rt.tracker().live_boots(), 0u);
  rt.tracker().finish_all();
  EXPECT_EQ(rt.done().size(), supervisors.size()) << "nothing is handed over twice";
}

TEST(BootTracker, SettledBootsCountsListensAndEndsOnce) {
  const Launch a{.cli = 100, .supervisor = 200, .container = 201, .t0 = 1'000'000};
  RecordingTracker rt(kAppCommand);
  EXPECT_EQ(rt.tracker().settled_boots(), 0u);
  const auto all = a.events();
  const auto until_listen = a.events_until_listen();
  rt.feed(until_listen);
  EXPECT_EQ(rt.tracker().settled_boots(), 1u) << "settled at its listen, still running";
  rt.feed(std::vector<Event>(all.begin() + static_cast<std::ptrdiff_t>(until_listen.size()), all.end()));
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.tracker().settled_boots(), 1u) << "its end does not count it again";

  // A second boot that never listens settles when it ends.
  const Launch b{.cli = 110, .supervisor = 210, .container = 211, .t0 = 2'000'000};
  auto events = b.events();
  std::erase_if(events, is_listen);
  rt.feed(events);
  EXPECT_EQ(rt.tracker().settled_boots(), 2u);

  // A third, still booting when tracing stops, settles then.
  const Launch c{.cli = 120, .supervisor = 220, .container = 221, .t0 = 3'000'000};
  auto until_exec = c.events_until_listen();
  until_exec.pop_back();
  rt.feed(until_exec);
  EXPECT_EQ(rt.tracker().settled_boots(), 2u);
  rt.tracker().finish_all();
  EXPECT_EQ(rt.tracker().settled_boots(), 3u);
}

// --from END_SETUP (3): the real capture's third boot listens before its
// supervisor passes phase 3. That boot ends like any other and must count for
// --count, or `-n N --from 3` never stops.
TEST(BootTracker, SettledBootsCountsABootThatListenedBeforeItsStartPhase) {
  const Launch l;
  auto events = l.events();
  for (auto& e : events) {
    if (is_listen(e)) e.ts_ns = l.execve() + 50;  // before phase 3 at t0 + 5100
  }
  events = test::merge_by_time({events});
  RecordingTracker rt({.start_phase = 3, .command = "/bin/app"});
  rt.feed(events);
  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].end, BootEnd::Exited);
  EXPECT_EQ(rt.tracker().settled_boots(), 1u)
      << "BUG: a started boot whose listen came before its start phase is never settled";
}

TEST(BootTracker, MaxLiveBootsEvictsTheOldest) {
  RecordingTracker rt({.command = "/bin/app", .max_live_boots = 2});
  const Launch a{.cli = 100, .supervisor = 200, .container = 201, .t0 = 1'000'000};
  const Launch b{.cli = 110, .supervisor = 210, .container = 211, .t0 = 2'000'000};
  const Launch c{.cli = 120, .supervisor = 220, .container = 221, .t0 = 3'000'000};
  rt.feed(a.events_until_listen());
  rt.feed(b.events_until_listen());
  EXPECT_TRUE(rt.done().empty());
  rt.feed(c.events_until_listen());

  ASSERT_EQ(rt.done().size(), 1u);
  EXPECT_EQ(rt.done()[0].hpid, a.supervisor);
  EXPECT_EQ(rt.done()[0].end, BootEnd::Evicted);
  EXPECT_EQ(rt.done()[0].listen_ns, a.listen()) << "an evicted boot keeps what it reached";
  EXPECT_EQ(rt.tracker().live_boots(), 2u);

  rt.tracker().finish_all();
  EXPECT_EQ(hpids_of(rt.done()), (std::vector<std::uint32_t>{200, 210, 220}));
  EXPECT_EQ(rt.done()[2].listen_ns, c.listen());
}

// A process firing the probe with a new hpid each time: once the live boots
// reach the cap, every event evicts the oldest one. Scanning every live boot
// for it makes the flood quadratic in the cap; found in O(log n), the oldest
// costs it a small part of the bound, which sits far from both, for
// sanitizer builds and a busy host.
TEST(BootTracker, AFloodOfUnknownHpidsEvictsTheOldestBootsQuickly) {
  constexpr std::uint32_t kFlood = 200'000;
  constexpr std::size_t kCap = 65'536;
  constexpr std::uint32_t kFirstHpid = 5'000'000;  // above any pid
  std::uint32_t evicted = 0;
  std::uint32_t out_of_order = 0;
  BootTracker tracker({.command = {}, .max_live_boots = kCap}, [&](const BootRecord& boot) {
    out_of_order += boot.end != BootEnd::Evicted || boot.hpid != kFirstHpid + evicted;
    ++evicted;
  });

  const auto cpu_before = std::clock();
  for (std::uint32_t i = 0; i < kFlood; ++i) tracker.on_event(ev::phase(1'000 + i, 42, kFirstHpid + i, 12));
  const double cpu_s = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;

  EXPECT_EQ(evicted, kFlood - kCap);
  EXPECT_EQ(out_of_order, 0U) << "boots are evicted oldest first";
  EXPECT_EQ(tracker.live_boots(), kCap);
  EXPECT_LT(cpu_s, 10.0) << "eviction scans the live boots";
}

}  // namespace
}  // namespace hacoboot

namespace hacoboot {
namespace {

// The kernel side tags each launch with an id; a container that outlived its
// supervisor keeps its launch's id after a new supervisor got the same pid.
TEST(BootTrackerLaunchIds, AnOrphanedContainersEventsStayOutOfTheBootThatReusedItsHpid) {
  constexpr std::uint32_t kSupervisor = 500;
  constexpr std::uint32_t kOrphan = 501;
  constexpr std::uint32_t kOldLaunch = 7;
  constexpr std::uint32_t kNewLaunch = 9;
  const auto tagged = [](Event e, std::uint32_t launch) {
    e.launch = launch;
    return e;
  };
  RecordingTracker rt(BootTracker::Config{.command = "/app"});
  rt.feed({
      tagged(ev::phase(1'000, kSupervisor, kSupervisor, 1), kOldLaunch),
      tagged(ev::phase(2'000, kSupervisor, kSupervisor, 2), kOldLaunch),
      tagged(ev::fork(2'100, kSupervisor, kSupervisor, kOrphan, Role::Container), kOldLaunch),
      tagged(ev::exit(3'000, kSupervisor, kSupervisor, Role::Launcher), kOldLaunch),  // killed
      tagged(ev::phase(10'000, kSupervisor, kSupervisor, 1), kNewLaunch),             // pid reused
      tagged(ev::exec(11'000, kOrphan, kSupervisor, "/app"), kOldLaunch),
      tagged(ev::listen(12'000, kOrphan, kSupervisor), kOldLaunch),
      tagged(ev::exit(13'000, kSupervisor, kSupervisor, Role::Launcher), kNewLaunch),
  });
  ASSERT_EQ(rt.done().size(), 2U);
  EXPECT_EQ(rt.done()[0].end, BootEnd::Replaced);
  EXPECT_EQ(rt.done()[0].container_pid, kOrphan);
  const auto& reused = rt.done()[1];
  EXPECT_EQ(reused.launch, kNewLaunch);
  EXPECT_EQ(reused.container_pid, 0U);
  EXPECT_FALSE(reused.execve_ns) << "the orphan's execve is not the new boot's";
  EXPECT_FALSE(reused.listen_ns) << "the orphan's listen is not the new boot's";
}

}  // namespace
}  // namespace hacoboot

namespace hacoboot {
namespace {

TEST(BootTrackerSettled, ABootIsHandedOverOnceWhenItListens) {
  const test::Launch l;
  std::vector<BootRecord> settled;
  test::RecordingTracker rt(kAppCommand);
  rt.tracker().on_settled([&](const BootRecord& boot) { settled.push_back(boot); });
  const auto all = l.events();
  const auto until_listen = l.events_until_listen();
  rt.feed(until_listen);
  ASSERT_EQ(settled.size(), 1U) << "settled at listen, while the container still runs";
  EXPECT_TRUE(settled.front().complete());
  EXPECT_TRUE(rt.done().empty());
  rt.feed(std::vector<Event>(all.begin() + static_cast<std::ptrdiff_t>(until_listen.size()), all.end()));
  EXPECT_EQ(settled.size(), 1U) << "settled once";
  EXPECT_EQ(rt.done().size(), 1U);
}

TEST(BootTrackerSettled, ABootThatNeverListensSettlesWhenItEnds) {
  const test::Launch l;
  std::vector<BootRecord> settled;
  test::RecordingTracker rt(kAppCommand);
  rt.tracker().on_settled([&](const BootRecord& boot) { settled.push_back(boot); });
  auto events = l.events();
  events.erase(std::remove_if(events.begin(), events.end(), is_listen), events.end());
  rt.feed(events);
  ASSERT_EQ(settled.size(), 1U);
  EXPECT_FALSE(settled.front().listen_ns.has_value());
}

TEST(BootTrackerExpiry, BootsWhoseProcessesAreGoneEndAsVanished) {
  const test::Launch l;
  test::RecordingTracker rt(kAppCommand);
  rt.feed(l.events_until_listen());  // the exits were lost
  rt.tracker().expire_vanished([&](std::uint32_t pid) { return pid == l.container; });
  EXPECT_TRUE(rt.done().empty()) << "its container still runs";
  rt.tracker().expire_vanished([](std::uint32_t) { return false; });
  ASSERT_EQ(rt.done().size(), 1U);
  EXPECT_EQ(rt.done().front().end, BootEnd::Vanished);
  EXPECT_EQ(rt.tracker().live_boots(), 0U);
}

}  // namespace
}  // namespace hacoboot
