// CuptiAttachment (cupti_attachment.h): the states by which light tracing detaches CUPTI
// between timing windows, driven by counting hooks instead of CUPTI. What CUPTI does when
// finalized from a callback and attached again is checked on a GPU (tests/gpu/light_hook.sh,
// light-detach).
#include "injector/cupti_attachment.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "injector/id_translation.h"

namespace occ::inj {
namespace {

struct Counts {
  std::atomic<int> requests{0}, cancels{0}, finalizes{0}, attaches{0};
  bool refuse_request = false;
  bool fail_finalize = false;
  bool refuse_attach = false;
};

CuptiAttachment::Hooks CountingHooks(Counts* counts) {
  CuptiAttachment::Hooks hooks;
  hooks.request_detach = [counts] {
    ++counts->requests;
    return !counts->refuse_request;
  };
  hooks.cancel_detach = [counts] { ++counts->cancels; };
  hooks.finalize = [counts] {
    ++counts->finalizes;
    return !counts->fail_finalize;
  };
  hooks.attach = [counts](std::string* error) {
    ++counts->attaches;
    if (counts->refuse_attach) *error = "another CUPTI client (test) subscribed while occtrace was detached";
    return !counts->refuse_attach;
  };
  return hooks;
}

std::map<std::string, std::string> MetaOf(const CuptiAttachment& attachment) {
  std::map<std::string, std::string> meta;
  for (const auto& [name, value] : attachment.Meta()) meta[name] = value;
  return meta;
}

using State = CuptiAttachment::State;

TEST(CuptiAttachmentTest, DetachesAtTheNextApiExitAndAttachesAgain) {
  Counts counts;
  CuptiAttachment attachment(CountingHooks(&counts));
  EXPECT_EQ(attachment.state(), State::kAttached);
  attachment.FinalizeFromCallback();  // nothing asked: an API exit does nothing
  EXPECT_EQ(counts.finalizes, 0);

  attachment.RequestDetach();
  EXPECT_EQ(attachment.state(), State::kDetachRequested);
  EXPECT_EQ(counts.requests, 1);
  int ran = 0;
  EXPECT_FALSE(attachment.IfAttached([&] { ++ran; })) << "no CUPTI call once a detach is asked for";
  std::thread program([&] { attachment.FinalizeFromCallback(); });  // a program thread's API exit
  program.join();
  EXPECT_EQ(attachment.state(), State::kDetached);
  EXPECT_EQ(counts.finalizes, 1);
  attachment.FinalizeFromCallback();
  EXPECT_EQ(counts.finalizes, 1) << "finalized once";
  EXPECT_FALSE(attachment.IfAttached([&] { ++ran; }));
  EXPECT_EQ(ran, 0);

  EXPECT_TRUE(attachment.Attach());
  EXPECT_EQ(attachment.state(), State::kAttached);
  EXPECT_EQ(counts.attaches, 1);
  EXPECT_TRUE(attachment.IfAttached([&] { ++ran; }));
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(attachment.Attach()) << "already attached: nothing to do";
  EXPECT_EQ(counts.attaches, 1);

  auto meta = MetaOf(attachment);
  EXPECT_EQ(meta["light_detach"], "on");
  EXPECT_EQ(meta["light_detaches"], "1");
  EXPECT_EQ(meta["light_reattaches"], "1");
  EXPECT_EQ(meta["light_reattach_refusals"], "0");
  EXPECT_EQ(meta["light_finalize_ms"].substr(0, 3), "1, ") << meta["light_finalize_ms"];
  EXPECT_EQ(meta.count("light_reattach_error"), 0u);
}

// CUPTI starts its thread from the one that attaches it, and a thread inherits its creator's
// name: on the GPU, CUPTI's thread after a re-attach showed as a second occtrace-writer using
// 2-5 ms of CPU per ResNet-50 step (bench/results/2026-11-26-h100-threads). A thread the attach
// starts is named occtrace-cupti; the writer keeps its own name.
TEST(CuptiAttachmentTest, ThreadsStartedWhileAttachingAreNamedForCupti) {
  std::string started_name;
  CuptiAttachment::Hooks hooks;
  hooks.request_detach = [] { return true; };
  hooks.cancel_detach = [] {};
  hooks.finalize = [] { return true; };
  hooks.attach = [&](std::string*) {
    std::thread cupti([&] {  // what CUPTI does inside cuptiSubscribe / cuptiActivityEnable
      char name[16] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      started_name = name;
    });
    cupti.join();
    return true;
  };
  CuptiAttachment attachment(std::move(hooks), "full_");
  std::string writer_name_after;
  std::thread writer([&] {
    pthread_setname_np(pthread_self(), "occtrace-writer");
    attachment.RequestDetach();
    attachment.FinalizeFromCallback();
    EXPECT_TRUE(attachment.Attach());
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    writer_name_after = name;
  });
  writer.join();
  EXPECT_EQ(started_name, CuptiAttachment::kCuptiThreadName);
  EXPECT_EQ(writer_name_after, "occtrace-writer");
}

// A window opening before any program thread made an API call since the request (an idle
// program): the request is taken back, CUPTI never left.
TEST(CuptiAttachmentTest, AttachBeforeAnyApiExitTakesTheRequestBack) {
  Counts counts;
  CuptiAttachment attachment(CountingHooks(&counts));
  attachment.RequestDetach();
  EXPECT_TRUE(attachment.Attach());
  EXPECT_EQ(attachment.state(), State::kAttached);
  EXPECT_EQ(counts.cancels, 1);
  EXPECT_EQ(counts.attaches, 0);
  attachment.FinalizeFromCallback();
  EXPECT_EQ(counts.finalizes, 0) << "the request was taken back";
  EXPECT_EQ(MetaOf(attachment)["light_detach_requests_taken_back"], "1");
}

TEST(CuptiAttachmentTest, RefusalsLeaveCuptiWhereItWas) {
  Counts counts;
  counts.refuse_request = true;
  CuptiAttachment attachment(CountingHooks(&counts));
  attachment.RequestDetach();
  EXPECT_EQ(attachment.state(), State::kAttached) << "the domains could not be enabled: stays attached";

  counts.refuse_request = false;
  counts.fail_finalize = true;
  attachment.RequestDetach();
  attachment.FinalizeFromCallback();
  EXPECT_EQ(attachment.state(), State::kAttached) << "a failed finalize leaves CUPTI attached";

  EXPECT_EQ(counts.cancels, 0);
  EXPECT_TRUE(attachment.Attach());
  EXPECT_EQ(counts.cancels, 1) << "the next window turns the domains off that the failed detach left on";
  EXPECT_EQ(counts.attaches, 0);

  counts.fail_finalize = false;
  attachment.RequestDetach();
  attachment.FinalizeFromCallback();
  ASSERT_EQ(attachment.state(), State::kDetached);
  counts.refuse_attach = true;
  EXPECT_FALSE(attachment.Attach());
  EXPECT_FALSE(attachment.Attach());
  EXPECT_EQ(attachment.state(), State::kDetached);
  auto meta = MetaOf(attachment);
  EXPECT_EQ(meta["light_reattach_refusals"], "2");
  EXPECT_EQ(meta["light_reattach_error"], "another CUPTI client (test) subscribed while occtrace was detached");
}

TEST(CuptiAttachmentTest, StopEndsDetachingAndAttaching) {
  Counts counts;
  CuptiAttachment attachment(CountingHooks(&counts));
  attachment.RequestDetach();
  attachment.Stop();
  attachment.FinalizeFromCallback();
  EXPECT_EQ(counts.finalizes, 0) << "no finalize once the trace ended";
  EXPECT_FALSE(attachment.Attach());

  CuptiAttachment attached(CountingHooks(&counts));
  attached.Stop();
  attached.RequestDetach();
  EXPECT_EQ(attached.state(), State::kAttached);
  int ran = 0;
  EXPECT_TRUE(attached.IfAttached([&] { ++ran; })) << "the final flush still runs";
  EXPECT_EQ(ran, 1);
}

// Many program threads reaching an API exit at once: exactly one finalizes; the writer's attach
// racing them either takes the request back or attaches after the finalize, never both.
TEST(CuptiAttachmentTest, OneFinalizeAmongManyThreadsAndARacingAttach) {
  for (int round = 0; round < 200; ++round) {
    Counts counts;
    CuptiAttachment attachment(CountingHooks(&counts));
    attachment.RequestDetach();
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&] {
        while (!go.load()) {
        }
        attachment.FinalizeFromCallback();
      });
    }
    go.store(true);
    const bool attached = attachment.Attach();
    for (std::thread& thread : threads) thread.join();
    ASSERT_TRUE(attached);
    ASSERT_LE(counts.finalizes.load(), 1);
    ASSERT_EQ(counts.finalizes.load() + counts.cancels.load(), 1) << "round " << round;
    ASSERT_EQ(counts.attaches.load(), counts.finalizes.load());
    ASSERT_EQ(attachment.state(), State::kAttached);
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
  for (const auto& [name, value] : ids.Meta()) meta[name] = value;
  EXPECT_EQ(meta["light_detach_contexts_learned_equal"], "1/1");
  EXPECT_EQ(meta["light_detach_streams_learned_equal"], "0/2");
  EXPECT_EQ(meta["light_detach_untranslated_context_launches"], "1");
  EXPECT_EQ(meta["light_detach_untranslated_stream_launches"], "1");
}

}  // namespace
}  // namespace occ::inj
