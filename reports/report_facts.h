// Phrases and lookups over the Report message shared by every printer, so that the text,
// Markdown, HTML and CSV reports say the same thing in the same words ("theoretical",
// "achieved (measured)", "upper bound"). Returns plain UTF-8 text; each printer escapes it for
// its own language.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/report.pb.h"

namespace occ::reports {

// The device a group's occupancy was evaluated on: the --gpu what-if device when there is one,
// else the device it ran on (same file and CUDA ordinal; ordinal only for merged groups);
// nullptr when the report has no matching device row.
const occtrace::Device* FindDevice(const occtrace::Report& report, const occtrace::KernelGroup& group);

// "device 0", "device 1, file 2" (several input files) or "what-if" (the --gpu device).
std::string DeviceTag(const occtrace::Report& report, const occtrace::Device& device);

// "Top 3 of 120 kernel configurations", "Top 2 kernel configurations", "The kernel configuration".
std::string TopTitle(const occtrace::Report& report);

// "occ-report 0.1.0".
std::string ToolName(const occtrace::Report& report);
// "NVIDIA H100 80GB HBM3 (cc 9.0, 132 SMs)".
std::string DeviceTitle(const occtrace::Device& device);
// "64 warps/SM, 32 blocks/SM, 65,536 registers/SM, 228 KiB shared memory/SM (227 KiB opt-in per block)".
std::string DeviceLimits(const occtrace::Device& device);
// Empty when every limit came from the trace; otherwise says which came from the built-in
// architecture table.
std::string DeviceProvenance(const occtrace::Device& device);
// "occtrace trace, schema 1, 12,345 launches, pid 4242 on node17, rank 3 of 8, local rank 3 of 8
// (torchrun)".
std::string FileFacts(const occtrace::InputFile& file);
// "CUDA driver 13.0, runtime 12.8, CUPTI 26" from what the file recorded; empty if nothing.
std::string FileVersions(const occtrace::InputFile& file);
// How achieved occupancy was handled for the file: "measured with hardware counters (sampled
// launches)", "not measured (--achieved off)", plus the reason when absent.
std::string AchievedModeText(const occtrace::InputFile& file);

// "registers", "shared memory", "warps per block", "blocks per SM", "barriers", "none",
// "cannot run", "not judged"; unknown names come back unchanged.
std::string LimiterLabel(std::string_view limiter);
// A block limit, or "no limit" for kNoLimit (INT32_MAX), as the model encodes it.
std::string BlockLimitText(int32_t limit);

// Grid or block dimensions without trailing 1s: "1024", "64×32", "8×8×4".
std::string DimsText(int32_t x, int32_t y, int32_t z);
int64_t BlockThreads(const occtrace::KernelGroup& group);
int64_t GridBlocks(const occtrace::KernelGroup& group);
// "0 B static + 4 KiB dynamic".
std::string SharedMemText(const occtrace::KernelGroup& group);
// "44 (48 allocated)" or "44" when allocation does not round.
std::string RegistersText(const occtrace::KernelGroup& group);

// Nsight Compute's "Block Limit Shared Mem": floor(executed carveout / allocation) when the trace
// recorded the executed carveout, with the model's figure at the largest carveout when it differs.
std::string SharedMemLimitText(const occtrace::Occupancy& occupancy);
// Nsight Compute's "Block Limit Barriers" (min(barrier limit, Block Limit SM)), else the model's.
std::string BarrierLimitText(const occtrace::Occupancy& occupancy);
// Short limiter names for narrow table columns: "registers", "shared mem", "warps", "blocks/SM".
std::string LimiterShortLabel(std::string_view limiter);

// "grid 3225 × block 256 (256 threads), 67 registers/thread (72 allocated), 0 B static + 0 B
// dynamic shared memory[, 16 B local memory/thread][, cluster 2×1]".
std::string LaunchText(const occtrace::KernelGroup& group);
// "740.0 ms in 1,200 launches (40.0% of GPU time); mean 616.7 µs, min 590.0 µs, max 702.0 µs".
std::string TimeText(const occtrace::KernelGroup& group, std::string_view share_of = "of GPU time");

// "Theoretical occupancy 62.5% (40 of 64 warps per SM) is limited by registers: ...".
std::string LimiterLine(const occtrace::KernelGroup& group);
bool HasAchieved(const occtrace::KernelGroup& group);
bool AnyAchieved(const occtrace::Report& report);
// "48.1% (replay: mean of 12 launches, min 40.2%, max 55.0%)", "47.6% ± 0.4 (PM samples: 45
// clean samples ...)" or "not measured: <reason>" (PM's reason when PM samples touched it); with
// replay, PM's figure beside it when the trace has one.
std::string AchievedText(const occtrace::KernelGroup& group);
// Which measurement the group's achieved figure came from: "replay", "pm" or "" (none).
const std::string& AchievedSource(const occtrace::KernelGroup& group);
// PM samples touched the group but give no figure (PmAchieved.status says why).
bool PmNoFigure(const occtrace::KernelGroup& group);
// Any group with PM figures or PM samples: printers then explain their table marks.
bool AnyPm(const occtrace::Report& report);
// The achieved cell of a narrow table (text): "48.1" (replay), "47.6p" (PM, clean samples only),
// "47.6m" (PM, mixed samples too), "n/e" (PM error too large), "n/s" (PM cannot separate it) or "–".
std::string AchievedNarrowCell(const occtrace::KernelGroup& group);
// The achieved cell of a wide table (Markdown, HTML): "48.1" (replay), "47.6 ± 0.4 (PM, 45
// samples)", "47.6 ± 0.9 (PM, 80 samples, 30 mixed)", "error too large (PM, ± 3.1 over 19
// samples)", "too few samples (PM, 3)", "not separable (PM)", "samples do not add up (PM)", "no
// PM sample" or "–".
std::string AchievedWideCell(const occtrace::KernelGroup& group);
// What follows a PM figure's value in a wide cell: "± 0.4 (PM, 80 samples, 30 mixed)".
std::string PmFigureNote(const occtrace::KernelGroup& group);
// The legend of those cells' marks; "" when the report has no PM samples.
extern const std::string_view kPmTableLegend;
extern const std::string_view kPmWideTableLegend;
// "14.4 points below theoretical", "0.4 points above theoretical (measurement noise)" when the
// measured value exceeds the model's, "equal to theoretical".
std::string GapText(const occtrace::KernelGroup& group);
// --gpu what-if: "NVIDIA H100 80GB HBM3", the traced GPU(s) achieved figures were measured on,
// for labels that keep them apart from the what-if GPU's theoretical occupancy; "" otherwise.
std::string TracedGpuForAchieved(const occtrace::Report& report);
// "DRAM 90.7%, L2 35.7%, L1 2.3%, issue slots 5.6%, tensor pipe 0.0% of peak (mean of 30 measured
// launches): near the DRAM ceiling ..."; "" when the trace recorded no throughput for the group.
std::string ThroughputText(const occtrace::KernelGroup& group);
// "1.55 (1 full wave + a partial wave of 372 blocks; the tail can be up to 50% of the runtime)".
std::string WavesText(const occtrace::KernelGroup& group);
// The suggestion's sentence (the advice states its predictions in it), ending in a period.
std::string SuggestionLine(const occtrace::Suggestion& suggestion);
// "up to 12.3 ms (upper bound)".
std::string RecoverableText(int64_t ns);
// The summary's recoverable time, measured gains and model bounds apart: "8.80 ms measured + up
// to 2.39 ms by the occupancy model (upper bound)". The same sums as the actions.
std::string SummaryRecoverableText(const occtrace::Summary& summary);
// "tuning overhead: 8.46 ms (2.8% of GPU time), by Triton's autotuner (@triton.autotune); not in
// the ranking or the actions", or empty when the trace shows no tuning (Summary.tuning_overhead_ns).
std::string TuningOverheadText(const occtrace::Summary& summary);
// One configuration's part of it (KernelGroup.counted_gain_*), with the model's bound when the
// function's action is a measured one and the bound is therefore not counted.
std::string GroupRecoverableText(const occtrace::KernelGroup& group);
// A table cell for a configuration's counted gain: "1.20 ms measured", "up to 40 µs", "–".
std::string GroupRecoverableCell(const occtrace::KernelGroup& group);
// "#3 " when the action's configuration is in the table, else "".
std::string ActionRef(const occtrace::Action& action);
// "3 smaller changes (below 1% of GPU time each) worth 40.2 µs in all: ..." heading.
std::string MinorActionsTitle(const occtrace::Report& report);
// Share of the report's GPU time in the unjudged groups, in percent.
double UnjudgedTimePct(const occtrace::Report& report);
// The same over the unjudged groups listed (--kernel may list fewer).
double ListedUnjudgedTimePct(const occtrace::Report& report);
// Measured points (KernelGroup.measured_points): "the same 4,194,304 threads per launch"; the
// index of the fastest point (-1 when none); one point's cells, shared by every printer:
// "block 256" (or "block (32, 8)": a shape), "12.1 µs", "100.0%", "61.5%" or "–" (not measured).
std::string MeasuredWorkText(const occtrace::KernelGroup& group);
int FastestMeasuredPoint(const occtrace::KernelGroup& group);
struct MeasuredPointCells {
  std::string block;
  std::string time;
  std::string theoretical;
  std::string achieved;
};
MeasuredPointCells MeasuredCells(const occtrace::MeasuredPoint& point);
// Why a group has no suggestion: "the whole grid (128 blocks) is resident at once (0.12 waves),
// so occupancy cannot limit it", or that no change raises its theoretical occupancy.
std::string NoSuggestionsReason(const occtrace::KernelGroup& group);

// The block sizes a group's occupancy chart marks, in the suggestions' order (measured first):
// the measured fastest configuration is "suggested", with its measurement; the model's block
// size is "suggested" only when nothing was measured faster, else a plain "model" mark.
struct BlockSizeMark {
  int32_t block_size = 0;
  double theoretical_pct = 0;  // on the curve: the configuration's theoretical occupancy
  bool suggested = false;
  std::string label;           // "suggested: 512 threads, measured fastest, 100.0% theoretical"
};
std::vector<BlockSizeMark> BlockSizeMarks(const occtrace::KernelGroup& group);

// --diff rows: "-34.4%" (GPU-time change after vs before), "" unless both sides exist.
std::string DiffTimeChange(const occtrace::DiffRow& row);
bool DiffHasBefore(const occtrace::DiffRow& row);  // not "new"
bool DiffHasAfter(const occtrace::DiffRow& row);   // not "gone"
// "-550.0 µs" / "+5.0 µs": a GPU-time change, signed.
std::string SignedDuration(int64_t delta_ns);
// --diff's opening, the same words in every format:
//   DiffTotalText:   "2.25 ms → 1.70 ms: 555.0 µs less GPU time (-24.7%)"
//   DiffChangedText: "3 kernels (configuration or occupancy changed, new or gone): -560.0 µs"
//   DiffSameText:    "1 kernel in the same configuration: +5.0 µs (run-to-run variation ...)"
std::string DiffTotalText(const occtrace::Diff& diff);
std::string DiffChangedText(const occtrace::Diff& diff);
std::string DiffSameText(const occtrace::Diff& diff);
// "was grid ..., 128 regs, ...; now grid ..., 64 regs, ..." when both sides exist and differ.
std::string DiffConfigChange(const occtrace::DiffRow& row);
inline constexpr std::string_view kDiffRowsTitle = "Kernels by GPU time saved or lost";

// Nsight Compute's occupancy figures for a judged group, in its order and with its names
// ("Theoretical Occupancy", "Block Limit Registers", ...): the `| Metric | Value |` tables of
// the Markdown and HTML reports. Values are plain text with units.
struct Metric {
  std::string name;
  std::string value;
};
std::vector<Metric> OccupancyMetrics(const occtrace::KernelGroup& group);

// True when the analyzer's notes already explain that recoverable time is an upper bound, so
// the printers do not repeat kRecoverableMeaning.
bool NotesCoverRecoverable(const occtrace::Report& report);

// Who owns the kernel and whether its launch configuration is the user's: "numba (your code)",
// "cuDNN (vendor library): not tunable from your code". Empty when the analyzer set no origin.
std::string OriginText(const occtrace::KernelGroup& group);

// Where the kernel comes from, for beside its name: "from add, hidden, normed (aten.add, aten.relu,
// aten.native_layer_norm)" for torch.compile's kernels (long lists end "… +N more"), "defined at
// k.py:6" for a hand-written Triton kernel. Empty when the trace does not say.
std::string SourceText(const occtrace::KernelSource& source);

// An action's predicted gain: "601 µs (33.1% of GPU time), measured", "up to ... (upper bound)",
// "not predicted". `share_of`: ShareOfWords.
std::string ActionGainText(const occtrace::Action& action, std::string_view share_of = "of GPU time");

// ---- Concurrent kernels (KernelGroup.overlap, Summary.busy_ns) ------------------------------

// Whether the summed kernel time exceeds the busy span (the union of kernel intervals) by 1 % or
// more: kernels ran concurrently, so a share of summed kernel time is not a share of the time
// the GPU was busy.
bool KernelsRanConcurrently(const occtrace::Summary& summary);
// What time shares are of: "of GPU time", or "of summed kernel time" where kernels ran
// concurrently.
std::string ShareOfWords(const occtrace::Report& report);
// "busy 1.22 s (the union of kernel intervals: kernels ran concurrently; shares are of summed
// kernel time)", for beside the summed kernel time; empty unless kernels ran concurrently.
std::string BusySpanText(const occtrace::Summary& summary);
// One line on a configuration's launches beside other kernels: "60.0% of its time overlapped
// other kernels (streams 14, 15, 16); 620 of 2,000 launches ran alone, mean 59.7 µs"; empty
// when under 1 % of its time overlapped or the overlap is unknown.
std::string OverlapText(const occtrace::KernelGroup& group);
// The same as one CSV field: "60.0% (streams 14 15 16)", "0.0%", or "unknown".
std::string OverlapCell(const occtrace::KernelGroup& group);

// ---- Several input files (Report.cross_rank) ------------------------------------------------

// True when the report compares several input files (ranks of a job, or several runs).
bool HasCrossRank(const occtrace::Report& report);
// True when some file ran NCCL kernels; a rank's NCCL time cell is "–" when none did.
bool AnyCommunication(const occtrace::Report& report);
std::string CommunicationCell(const occtrace::Report& report, int64_t ns);
// The file's name in the cross-rank section: "rank 3", "rank 0 [file 2]", "file 1".
std::string RankName(const occtrace::Report& report, int file_index);
// "Across ranks: 4 files, ranks 0-3 of world size 4", "Across input files: 2 files".
std::string CrossRankTitle(const occtrace::Report& report);
// What tells the files apart: "each trace's OCC_META rank, from torchrun's variables", "the file
// names (rank<N>)", "nothing recorded: files are numbered in command-line order".
std::string RankIdentityText(const occtrace::Report& report);
// True when the report names a straggler: ranks of one program (CrossRank.different_programs
// empty) and the slowest rank's compute time at least kStragglerPct over the median rank's.
bool HasStraggler(const occtrace::Report& report);
// True when a top configuration's slowest rank stands out (kStragglerPct over the median), among
// ranks of one program, outside NCCL kernels.
bool SpreadStraggles(const occtrace::Report& report, const occtrace::RankSpread& spread);
// The compute straggler: the rank whose GPU time outside NCCL kernels is furthest above the
// median rank's, that there is none above kStragglerPct, or that none is named because the
// files are not ranks of one program.
std::string StragglerText(const occtrace::Report& report);
// The kernels the straggler spends most time in over the median rank, for StragglerText:
// "gemm_tn_kernel<128, 128, 32> takes 1.30 ms on rank 2, 295.0 µs over the median rank's
// 1.00 ms"; "rank 1 alone runs 48.0 ms of nvjet_…". "" when none.
std::string StragglerCauseText(const occtrace::Report& report);
// `paths` as a table with `width` columns shows them, told apart: without the directory they
// all share, and a name still wider than `width` keeps the part where the names differ
// ("…rank1/trace.db", "…slow_rank1_attempt…") instead of its first characters, which several
// ranks' files often share. Byte counts: paths are taken as ASCII for the cut.
std::vector<std::string> DistinctFileNames(const std::vector<std::string>& paths, int width);
// A top configuration across ranks: "slowest on rank 2: 1.80 ms, 50.0% over the median
// (1.20 ms); fastest rank 0, 1.19 ms"; for NCCL kernels "longest on ...", marked as waiting.
std::string SpreadText(const occtrace::Report& report, const occtrace::RankSpread& spread);
// "+50.0%" (slowest over median), "" when it ran on fewer than two files.
std::string SpreadOverMedianText(const occtrace::RankSpread& spread);
// One file's cell: "1.20 ms (45.1%)" with achieved occupancy when measured, else "1.20 ms".
std::string RankCellText(const occtrace::RankFigures& figures);
// The figures of `spread` for `file_index`, or nullptr when that file did not run it.
const occtrace::RankFigures* FindRankFigures(const occtrace::RankSpread& spread, int file_index);
// Which of spread.per_rank() a long listing shows: all up to `max_shown`, else the slowest
// max_shown - 2 and the fastest 2, in rank order.
std::vector<int> ShownRankFigures(const occtrace::RankSpread& spread, int max_shown);
// "on rank 1 only (of 4)", "on ranks 0, 2 (of 4)"; then whether the kernel ran elsewhere in
// other configurations.
std::string RankOnlyText(const occtrace::Report& report, const occtrace::RankOnlyConfig& config);
// "rank 3 of 8, local rank 3 of 8 (torchrun)", "rank 2 (from the file name)"; "" without one.
std::string FileRankText(const occtrace::InputFile& file);
// "K1" ... for the top configurations of the cross-rank section.
std::string CrossRankKernelTag(int index);
// Below this excess over the median the report names no straggler: step-to-step variation of a
// healthy data-parallel job is a few percent.
inline constexpr double kStragglerPct = 5.0;
extern const std::string_view kCommunicationMeaning;
extern const std::string_view kCrossRankKernelsTitle;
extern const std::string_view kRankOnlyTitle;

// The "What to change" section's heading and the line that stands for it when it is empty.
extern const std::string_view kActionsTitle;
extern const std::string_view kNoActions;

// Sentences every report prints about its own figures.
extern const std::string_view kTheoreticalMeaning;
extern const std::string_view kAchievedMeaning;
extern const std::string_view kRecoverableMeaning;

}  // namespace occ::reports
