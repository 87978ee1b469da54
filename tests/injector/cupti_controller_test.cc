// CuptiController (cupti_controller.h): every row of its state table and the refused events,
// driven through a counting stand-in Seam instead of CUPTI. What CUPTI does when finalized from
// a callback and attached again is checked on a GPU (tests/gpu/modes_checks.sh, light-detach).
#include "injector/tracer/cupti_controller.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "injector/light/id_translation.h"
#include "injector/writer/trace_writer.h"

namespace occ::inj {
namespace {

// What the controller asked of CUPTI, in order ("records on", "flush", "request", ...).
struct Calls {
  std::vector<std::string> log;
  std::mutex mutex;
  std::atomic<int> finalizes{0};
  bool refuse_request = false;
  bool fail_finalize = false;
  bool refuse_attach = false;
  bool refuse_callbacks = false;
  void Add(std::string call) {
    std::lock_guard lock(mutex);
    log.push_back(std::move(call));
  }
  std::vector<std::string> Take() {
    std::lock_guard lock(mutex);
    return std::exchange(log, {});
  }
};

CuptiController::Seam CountingSeam(Calls* calls) {
  CuptiController::Seam seam;
  seam.records = [calls](bool on) -> uint64_t {
    calls->Add(on ? "records on" : "records off");
    return on ? 200 : 100;
  };
  seam.flush = [calls] { calls->Add("flush"); };
  seam.request_detach = [calls] {
    calls->Add("request");
    return !calls->refuse_request;
  };
  seam.cancel_detach = [calls] { calls->Add("cancel"); };
  seam.finalize = [calls] {
    ++calls->finalizes;
    return !calls->fail_finalize;
  };
  seam.attach = [calls](std::string* error) {
    calls->Add("attach");
    if (calls->refuse_attach) *error = "another CUPTI client (test) subscribed while occtrace was detached";
    return !calls->refuse_attach;
  };
  seam.launch_callbacks = [calls](bool on, std::string* error) {
    calls->Add(on ? "callbacks on" : "callbacks off");
    if (calls->refuse_callbacks) *error = "CUPTI_ERROR_NOT_INITIALIZED";
    return !calls->refuse_callbacks;
  };
  return seam;
}

std::map<std::string, std::string> MetaOf(const CuptiController& controller) {
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : controller.Meta()) {
    CheckMetaKey(name);  // declared in schema/meta_keys.h (meta_keys_checked.cc)
    meta[name] = value;
  }
  return meta;
}

using State = CuptiController::State;
using Log = std::vector<std::string>;

// Light tracing with detach whose first window has just closed with a detach requested; the
// calls that took are forgotten.
void CloseTheFirstWindowAskingToDetach(CuptiController* controller, Calls* calls) {
  uint64_t at = 0;
  ASSERT_TRUE(controller->CloseWindow(/*may_detach=*/true, &at));
  ASSERT_EQ(controller->state(), State::kDetachRequested);
  calls->Take();
}

// Light tracing with detach, from its first window's end to detached and back: the table's
// main cycle, with the CUPTI calls of each row in order.
TEST(CuptiControllerTest, WindowsDetachAtTheNextApiExitAndAttachAgain) {
  Calls calls;
  CuptiController controller(CountingSeam(&calls), "", /*launch_callbacks_on=*/true);
  EXPECT_EQ(controller.state(), State::kRecording) << "records on from the start";
  uint64_t at = 0;
  EXPECT_TRUE(controller.CloseWindow(/*may_detach=*/false, &at));
  EXPECT_EQ(at, 100u);
  EXPECT_EQ(controller.state(), State::kAttached);
  EXPECT_EQ(calls.Take(), (Log{"records off"}));
  EXPECT_TRUE(controller.OpenWindow(&at));
  EXPECT_EQ(at, 200u);
  EXPECT_EQ(controller.state(), State::kRecording);
  EXPECT_EQ(calls.Take(), (Log{"records on"}));

  controller.FinalizeFromCallback();  // nothing asked: an API exit does nothing
  EXPECT_EQ(calls.finalizes, 0);
  EXPECT_TRUE(controller.CloseWindow(/*may_detach=*/true, &at));
  EXPECT_EQ(controller.state(), State::kDetachRequested);
  EXPECT_EQ(calls.Take(), (Log{"records off", "flush", "request"})) << "nothing held in CUPTI when it goes";
  int ran = 0;
  EXPECT_FALSE(controller.IfAttached([&] { ++ran; })) << "no CUPTI call once a detach is asked for";
  std::thread program([&] { controller.FinalizeFromCallback(); });  // a program thread's API exit
  program.join();
  EXPECT_EQ(controller.state(), State::kDetached);
  EXPECT_EQ(calls.finalizes, 1);
  controller.FinalizeFromCallback();
  EXPECT_EQ(calls.finalizes, 1) << "finalized once";
  EXPECT_FALSE(controller.IfAttached([&] { ++ran; }));
  EXPECT_EQ(ran, 0);

  EXPECT_TRUE(controller.OpenWindow(&at));
  EXPECT_EQ(controller.state(), State::kRecording);
  EXPECT_EQ(calls.Take(), (Log{"attach", "records on"}));
  EXPECT_TRUE(controller.IfAttached([&] { ++ran; }));
  EXPECT_EQ(ran, 1);

  auto meta = MetaOf(controller);
  EXPECT_EQ(meta["light_detach"], "on");
  EXPECT_EQ(meta["light_detaches"], "1");
  EXPECT_EQ(meta["light_reattaches"], "1");
  EXPECT_EQ(meta["light_reattach_refusals"], "0");
  EXPECT_EQ(meta["light_controller_refused_events"], "0");
  EXPECT_EQ(meta["light_finalize_ms"].substr(0, 3), "1, ") << meta["light_finalize_ms"];
  EXPECT_EQ(meta["light_detach_state_at_end"], "recording");
  EXPECT_EQ(meta.count("light_reattach_error"), 0u);
}

// Events the table has no row for are refused: no CUPTI call, the state kept, the refusal
// counted.
TEST(CuptiControllerTest, EventsWithoutARowAreRefused) {
  Calls calls;
  CuptiController controller(CountingSeam(&calls), "", true);
  uint64_t at = 7;
  EXPECT_FALSE(controller.OpenWindow(&at)) << "already recording";
  EXPECT_EQ(at, 7u);
  ASSERT_TRUE(controller.CloseWindow(true, &at));
  ASSERT_EQ(controller.state(), State::kDetachRequested);
  EXPECT_FALSE(controller.CloseWindow(true, &at)) << "no window open";
  controller.FinalizeFromCallback();
  ASSERT_EQ(controller.state(), State::kDetached);
  EXPECT_FALSE(controller.CloseWindow(false, &at)) << "detached, no window";
  calls.Take();
  controller.Stop();
  EXPECT_FALSE(controller.OpenWindow(&at)) << "stopped";
  EXPECT_FALSE(controller.Pin("late"));
  std::string error;
  EXPECT_FALSE(controller.SetLaunchCallbacks(false, &error));
  EXPECT_TRUE(error.empty()) << "a refusal by the table is not CUPTI's error";
  EXPECT_TRUE(calls.Take().empty());
  EXPECT_EQ(controller.state(), State::kDetached);
  EXPECT_EQ(MetaOf(controller)["light_controller_refused_events"], "6");
}

// A window opening before any program thread made an API call since the request (an idle
// program): the request is taken back, CUPTI never left.
TEST(CuptiControllerTest, AWindowBeforeAnyApiExitTakesTheRequestBack) {
  Calls calls;
  CuptiController controller(CountingSeam(&calls), "", true);
  CloseTheFirstWindowAskingToDetach(&controller, &calls);
  uint64_t at = 0;
  EXPECT_TRUE(controller.OpenWindow(&at));
  EXPECT_EQ(controller.state(), State::kRecording);
  EXPECT_EQ(calls.Take(), (Log{"cancel", "records on"}));
  controller.FinalizeFromCallback();
  EXPECT_EQ(calls.finalizes, 0) << "the request was taken back";
  EXPECT_EQ(MetaOf(controller)["light_detach_requests_taken_back"], "1");
}

TEST(CuptiControllerTest, RefusalsLeaveCuptiWhereItWas) {
  Calls calls;
  calls.refuse_request = true;
  CuptiController controller(CountingSeam(&calls), "", true);
  uint64_t at = 0;
  EXPECT_TRUE(controller.CloseWindow(true, &at));
  EXPECT_EQ(controller.state(), State::kAttached) << "the domains could not be enabled: stays attached";

  calls.refuse_request = false;
  calls.fail_finalize = true;
  controller.OpenWindow(&at);
  controller.CloseWindow(true, &at);
  controller.FinalizeFromCallback();
  EXPECT_EQ(controller.state(), State::kAttached) << "a failed finalize leaves CUPTI attached";
  calls.Take();
  EXPECT_TRUE(controller.OpenWindow(&at));
  EXPECT_EQ(calls.Take(), (Log{"cancel", "records on"})) << "the domains the failed detach left on go off";

  calls.fail_finalize = false;
  controller.CloseWindow(true, &at);
  controller.FinalizeFromCallback();
  ASSERT_EQ(controller.state(), State::kDetached);
  calls.refuse_attach = true;
  EXPECT_FALSE(controller.OpenWindow(&at));
  EXPECT_FALSE(controller.OpenWindow(&at));
  EXPECT_EQ(controller.state(), State::kDetached);
  auto meta = MetaOf(controller);
  EXPECT_EQ(meta["light_reattach_refusals"], "2");
  EXPECT_EQ(meta["light_reattach_error"], "another CUPTI client (test) subscribed while occtrace was detached");
  EXPECT_EQ(meta["light_controller_refused_events"], "0") << "CUPTI's refusals are not the table's";
}

// Pinned, CUPTI never detaches: from construction (a full trace, light tracing without
// detach), or from a Pin while detached (attached again, records off) or while a request is
// pending (taken back).
TEST(CuptiControllerTest, PinnedNeverDetaches) {
  Calls calls;
  CuptiController full(CountingSeam(&calls), "full trace", false);
  uint64_t at = 0;
  EXPECT_TRUE(full.CloseWindow(true, &at));
  EXPECT_EQ(full.state(), State::kAttached);
  EXPECT_EQ(calls.Take(), (Log{"records off"})) << "no flush, no request";
  EXPECT_EQ(full.pinned(), "full trace");

  CuptiController light(CountingSeam(&calls), "", true);
  light.CloseWindow(true, &at);
  calls.Take();
  EXPECT_TRUE(light.Pin("CUDA graphs or stream capture"));
  EXPECT_EQ(light.state(), State::kAttached);
  EXPECT_EQ(calls.Take(), (Log{"cancel"}));
  light.FinalizeFromCallback();
  EXPECT_EQ(calls.finalizes, 0);

  CuptiController detached(CountingSeam(&calls), "", true);
  detached.CloseWindow(true, &at);
  detached.FinalizeFromCallback();
  calls.Take();
  EXPECT_TRUE(detached.Pin("CUDA graphs or stream capture"));
  EXPECT_EQ(detached.state(), State::kAttached) << "attached for good, records off until the next window";
  EXPECT_EQ(calls.Take(), (Log{"attach"}));
  EXPECT_TRUE(detached.Pin("another reason"));
  EXPECT_EQ(detached.pinned(), "CUDA graphs or stream capture") << "the first reason stays";
  EXPECT_TRUE(detached.OpenWindow(&at));
  EXPECT_TRUE(detached.CloseWindow(true, &at));
  EXPECT_EQ(detached.state(), State::kAttached);
  EXPECT_EQ(calls.Take(), (Log{"records on", "records off"}));
}

// The launch callbacks: switched while attached, remembered while detached and applied at the
// attach (which turns them on with the rest of the setup); on_ms counts only while they are on
// in CUPTI; a refused switch is tried again on the next wish.
TEST(CuptiControllerTest, LaunchCallbacksFollowTheWishAndCountTheirTime) {
  Calls calls;
  int64_t now = 1'000'000;
  CuptiController controller(CountingSeam(&calls), "", true, [&] { return now; });
  std::string error;
  now += 2'000'000;  // on from construction: 2 ms
  EXPECT_DOUBLE_EQ(controller.callbacks_on_ms(), 2.0) << "the open period counts";
  EXPECT_TRUE(controller.SetLaunchCallbacks(true, &error));
  EXPECT_TRUE(calls.Take().empty()) << "already on";
  EXPECT_TRUE(controller.SetLaunchCallbacks(false, &error));
  EXPECT_EQ(calls.Take(), (Log{"callbacks off"}));
  now += 50'000'000;  // off: 50 ms
  EXPECT_DOUBLE_EQ(controller.callbacks_on_ms(), 2.0);

  calls.refuse_callbacks = true;
  EXPECT_FALSE(controller.SetLaunchCallbacks(true, &error));
  EXPECT_EQ(error, "CUPTI_ERROR_NOT_INITIALIZED");
  calls.refuse_callbacks = false;
  EXPECT_TRUE(controller.SetLaunchCallbacks(true, &error));
  EXPECT_EQ(calls.Take(), (Log{"callbacks on", "callbacks on"})) << "refused, then tried again";
  now += 1'000'000;  // on: 1 ms

  uint64_t at = 0;
  controller.CloseWindow(true, &at);
  now += 500'000;  // on until the finalize: 0.5 ms
  controller.FinalizeFromCallback();
  now += 10'000'000;  // detached: nothing
  EXPECT_DOUBLE_EQ(controller.callbacks_on_ms(), 3.5);
  calls.Take();
  EXPECT_TRUE(controller.SetLaunchCallbacks(false, &error));
  EXPECT_TRUE(calls.Take().empty()) << "detached: remembered, no CUPTI call";
  EXPECT_TRUE(controller.OpenWindow(&at));
  EXPECT_EQ(calls.Take(), (Log{"attach", "callbacks off", "records on"}))
      << "the attach turned them on; the wish turned them off again";
  EXPECT_EQ(controller.figures().callback_switches, 2u) << "off, on (the refused one not counted)";
}

// The final flush needs CUPTI: Stop takes a pending request back, and IfAttached still runs;
// after Stop no program thread finalizes.
TEST(CuptiControllerTest, StopTakesAPendingRequestBackAndEndsEveryEvent) {
  Calls calls;
  CuptiController controller(CountingSeam(&calls), "", true);
  CloseTheFirstWindowAskingToDetach(&controller, &calls);
  controller.Stop();
  EXPECT_EQ(controller.state(), State::kAttached);
  EXPECT_EQ(calls.Take(), (Log{"cancel"}));
  controller.FinalizeFromCallback();
  EXPECT_EQ(calls.finalizes, 0) << "no finalize once the trace ended";
  int ran = 0;
  EXPECT_TRUE(controller.IfAttached([&] { ++ran; })) << "the final flush still runs";
  EXPECT_EQ(ran, 1);
}

// CloseWindow's flush runs through the same IfAttached that other threads use: from inside the
// event, on the writer's own thread, it runs at once instead of waiting for itself.
TEST(CuptiControllerTest, TheFlushInsideCloseWindowRunsOnItsOwnThread) {
  CuptiController* self = nullptr;
  int flushed = 0;
  Calls calls;
  CuptiController::Seam seam = CountingSeam(&calls);
  seam.flush = [&] { EXPECT_TRUE(self->IfAttached([&] { ++flushed; }, /*wait_ms=*/0)); };
  CuptiController controller(std::move(seam), "", true);
  self = &controller;
  uint64_t at = 0;
  EXPECT_TRUE(controller.CloseWindow(true, &at));
  EXPECT_EQ(flushed, 1);
}

// CUPTI starts its thread from the one that attaches it, and a thread inherits its creator's
// name: on the GPU, CUPTI's thread after a re-attach showed as a second occtrace-writer using
// 2-5 ms of CPU per ResNet-50 step (bench/results/2026-11-26-h100-threads). A thread the attach
// starts is named occtrace-cupti; the writer keeps its own name.
TEST(CuptiControllerTest, ThreadsStartedWhileAttachingAreNamedForCupti) {
  std::string started_name;
  Calls calls;
  CuptiController::Seam seam = CountingSeam(&calls);
  seam.attach = [&](std::string*) {
    std::thread cupti([&] {  // what CUPTI does inside cuptiSubscribe / cuptiActivityEnable
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      started_name = name;
    });
    cupti.join();
    return true;
  };
  CuptiController controller(std::move(seam), "", true);
  std::string writer_name_after;
  std::thread writer([&] {
    pthread_setname_np(pthread_self(), "occtrace-writer");
    uint64_t at = 0;
    controller.CloseWindow(true, &at);
    controller.FinalizeFromCallback();
    EXPECT_TRUE(controller.OpenWindow(&at));
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    writer_name_after = name;
  });
  writer.join();
  EXPECT_EQ(started_name, CuptiController::kCuptiThreadName);
  EXPECT_EQ(writer_name_after, "occtrace-writer");
}

// Many program threads reaching an API exit at once: exactly one finalizes; the writer's window
// racing them either takes the request back or attaches after the finalize, never both.
TEST(CuptiControllerTest, OneFinalizeAmongManyThreadsAndARacingWindow) {
  for (int round = 0; round < 200; ++round) {
    Calls calls;
    CuptiController controller(CountingSeam(&calls), "", true);
    CloseTheFirstWindowAskingToDetach(&controller, &calls);
    uint64_t at = 0;
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] {
        while (!go.load()) {
        }
        controller.FinalizeFromCallback();
      });
    }
    go.store(true);
    const bool opened = controller.OpenWindow(&at);
    for (std::thread& thread : threads) thread.join();
    ASSERT_TRUE(opened);
    const Log log = calls.Take();
    const int cancels = static_cast<int>(std::count(log.begin(), log.end(), "cancel"));
    const int attaches = static_cast<int>(std::count(log.begin(), log.end(), "attach"));
    ASSERT_LE(calls.finalizes.load(), 1);
    ASSERT_EQ(calls.finalizes.load() + cancels, 1) << "round " << round;
    ASSERT_EQ(attaches, calls.finalizes.load());
    ASSERT_EQ(controller.state(), State::kRecording);
  }
}

TEST(IdTranslationTest, DriverIdsBecomeCuptisWhereLearned) {
  IdTranslation ids;
  ids.LearnContext(1, 1);
  ids.LearnStream(13, 7);
  ids.LearnStream((uint64_t{1} << 32) + 14, 9);  // kept to the low 32 bits, as a LaunchCall holds it
  uint32_t context = 1, stream = 13;
  ids.Translate(&context, &stream);
  EXPECT_EQ(context, 1u);
  EXPECT_EQ(stream, 7u);
  stream = 14;
  ids.Translate(&context, &stream);
  EXPECT_EQ(stream, 9u);
  context = 2, stream = 99;
  ids.Translate(&context, &stream);
  EXPECT_EQ(context, 2u) << "never learned: the driver's id stays";
  EXPECT_EQ(stream, 99u);
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : ids.Meta()) {
    CheckMetaKey(name);
    meta[name] = value;
  }
  EXPECT_EQ(meta["light_detach_contexts_learned_equal"], "1/1");
  EXPECT_EQ(meta["light_detach_streams_learned_equal"], "0/2");
  EXPECT_EQ(meta["light_detach_untranslated_context_launches"], "1");
  EXPECT_EQ(meta["light_detach_untranslated_stream_launches"], "1");
}

}  // namespace
}  // namespace occ::inj
