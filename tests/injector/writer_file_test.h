// A gtest fixture for TraceWriter tests: a writer on a fresh file named after the running test
// (removed afterwards), and kernel records handed to it through a real activity buffer.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <string>

#include "injector/writer/trace_writer.h"
#include "tests/injector/fake_records.h"

namespace occ::inj::testing {

class WriterFileTest : public ::testing::Test {
 protected:
  // `stem`: the file name's prefix, before the test's name.
  void OpenWriter(const std::string& stem) {
    path_ = TempPath(stem + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(writer_.Open(path_));
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path_ + suffix).c_str());
  }
  void AddRecords(std::initializer_list<ActivityKernel> kernels) {
    FakeActivityBuffer buffer;
    for (const ActivityKernel& kernel : kernels) ASSERT_TRUE(buffer.Add(kernel));
    writer_.AddBuffer(buffer.data(), buffer.size());
  }
  std::string path_;
  TraceWriter writer_;
};

}  // namespace occ::inj::testing
