// The replay report: one self-contained HTML file (no network, no external scripts, fonts or
// images) in which a student steps through a run event by event and sees, at any instant, each
// node's role, epoch, local clock and lease, a replicated store's members and their Raft roles,
// the messages in flight, the store and the sink, and the checkers' findings as the replay passes
// them. ReplayRecorder watches the run (an Observer, like the trace writer); render_replay_html
// turns what it kept into the page.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "analysis/expect.hpp"
#include "analysis/report.hpp"
#include "analysis/summary.hpp"
#include "analysis/trace.hpp"
#include "sim/clock.hpp"
#include "sim/event.hpp"
#include "sim/kernel.hpp"

namespace electsim::drawing {

using sim::Duration;
using sim::Epoch;
using sim::NodeId;
using sim::Time;

// One piece of a clock's reading in true time: for from <= t < the next piece's from,
//   local(t) = base + (t - anchor) + floor((t - anchor) * drift_ppb / 1e9)
// which is exactly what sim::ClockModel reads there (anchor is its last change of drift).
struct ClockSegment {
  std::int64_t from_ns = 0;
  std::int64_t anchor_ns = 0;
  std::int64_t base_ns = 0;
  std::int64_t drift_ppb = 0;
};

// A segment's reading at true time t (exact integer arithmetic, the formula the page evaluates).
std::int64_t clock_segment_reading(const ClockSegment& segment, std::int64_t t_ns);

// The fields the page's data carries for `kind`, in order: the trace schema's
// (sim/event_schema.hpp), or derived by the page (replay_derived_fields()).
const std::vector<std::string_view>& replay_fields(sim::EventKind kind);
std::span<const std::string_view> replay_derived_fields();

// One kept event, packed: which Event slot x, y, z and flags hold depends on the kind
// (replay_html.cpp, pack()).
struct ReplayEvent {
  std::int64_t time_ns = 0;
  std::int64_t x = 0;
  std::int64_t y = 0;
  std::int64_t z = 0;
  std::int32_t node = sim::kNoNode;
  std::int32_t peer = sim::kNoNode;
  std::int32_t text = -1;  // index into texts(), or -1
  std::uint16_t code = 0;
  sim::EventKind kind = sim::EventKind::run_start;
  std::uint8_t flags = 0;
};

// Something on its way: a peer message, a request to the store, the store's reply, the sink's
// reply. `start` and `end` index events(): the send (or the store's apply, or the sink's write)
// and the arrival (delivery or drop). A peer message's arrival names its send by the message id;
// a second arrival of one id is a network duplicate.
struct ReplayFlight {
  enum class Status : std::uint8_t {
    arrived,            // delivered
    dropped,            // dropped on arrival (receiver down, link cut)
    travelling_at_end,  // no arrival before the run ended
    duplicate_arrived,  // a network duplicate of an earlier message, delivered
    duplicate_dropped,  // a network duplicate, dropped on arrival
  };
  std::uint32_t start = 0;
  std::uint32_t end = 0;  // events().size() when travelling at the end
  Status status = Status::arrived;
};

// Keeps every event the page shows, in order (timer fires are only counted), the texts they carry
// (store keys, partition groups) once each, each node's clock as segments, and pairs sends with
// arrivals as they happen. Memory: about 48 bytes per kept event and 12 per message.
class ReplayRecorder : public sim::Observer {
 public:
  // `world` gives the clocks (offset, drift, scheduled steps; the store's among its servers);
  // `lease_ttl` is the lease protocol's TTL (nullopt for protocols without a lease), judged by the
  // store's clock when `lease_judged_by_store`, else by the followers' clocks; the store raises a
  // shorter TTL to `store_min_ttl`.
  ReplayRecorder(analysis::TraceHeader header, const sim::WorldConfig& world,
                 std::optional<sim::Duration> lease_ttl, bool lease_judged_by_store,
                 sim::Duration store_min_ttl = sim::Duration(0));

  // The most events one page may show: about 16 bytes each in the page and 48 in memory. Past it
  // the recorder drops what it kept and overflowed() says so; the run reports it.
  static constexpr std::size_t kMaxEvents = 5'000'000;

  void on_event(const sim::Event& event) override;
  bool overflowed() const { return overflowed_; }
  void set_max_events(std::size_t max) { max_events_ = max; }

  const analysis::TraceHeader& header() const { return header_; }
  const std::vector<ReplayEvent>& events() const { return events_; }
  const std::vector<std::string>& texts() const { return texts_; }
  std::uint64_t events_seen() const { return events_seen_; }  // every event, timer fires included
  std::uint64_t timer_fires() const { return timer_fires_; }
  const std::vector<std::uint64_t>& timer_fires_by_node() const { return timer_fires_by_node_; }
  // Per node, in time order; the first segment starts at 0.
  const std::vector<std::vector<ClockSegment>>& clock_segments() const { return node_segments_; }
  const std::vector<ClockSegment>& store_clock_segments() const { return store_segments_; }
  std::optional<sim::Duration> lease_ttl() const { return lease_ttl_; }
  // A replicated store's members, which the page shows as cards of their own: the header's count,
  // or more if server_role events name more; 0 with a single store.
  std::size_t store_members() const { return store_members_; }
  bool lease_judged_by_store() const { return lease_judged_by_store_; }
  // Every flight, those still travelling included, ordered by (start, end).
  std::vector<ReplayFlight> flights() const;
  // Store requests that never reached the store, and replies that never reached their node
  // (lost on a cut link, or to a crashed incarnation): the kernel reports no event for these.
  std::uint64_t requests_lost() const;

 private:
  struct Clock {
    sim::ClockModel model;
    std::int64_t anchor_ns = 0;
    std::vector<std::int64_t> scheduled_steps_ns;  // from the world's config, sorted
  };
  // A peer message, by its id (msg_send's `id`, from 1): its send event and how far it got.
  struct Message {
    enum class State : std::uint8_t { unsent, travelling, arrived, dropped_at_send };
    std::uint32_t start = 0;
    State state = State::unsent;
  };
  // node, op, revision, succeeded: what a store reply shares with the store's apply.
  using ReplyKey = std::tuple<std::int32_t, std::uint16_t, std::int64_t, bool>;
  using SinkKey = std::tuple<std::int32_t, std::int64_t, bool>;  // node, token, accepted

  std::int32_t intern(std::string_view text);
  void on_clock_change(const sim::Event& event);
  void pair(const sim::Event& event, std::uint32_t index);
  void forget_replies_to(sim::NodeId node);
  static Clock make_clock(const sim::ClockConfig& config);
  static void rebuild_from(const Clock& clock, std::vector<ClockSegment>& segments,
                           std::int64_t at_ns);

  analysis::TraceHeader header_;
  std::optional<sim::Duration> lease_ttl_;
  bool lease_judged_by_store_ = false;
  sim::Duration store_min_ttl_{0};

  bool overflowed_ = false;
  std::size_t max_events_ = kMaxEvents;
  std::vector<ReplayEvent> events_;
  std::vector<std::string> texts_;
  std::map<std::string, std::int32_t, std::less<>> text_ids_;
  std::uint64_t events_seen_ = 0;
  std::uint64_t timer_fires_ = 0;
  std::vector<std::uint64_t> timer_fires_by_node_;
  std::optional<sim::Epoch> newest_epoch_;  // the analyzer's rule for a stale write
  std::size_t store_members_ = 0;

  std::vector<Clock> node_clocks_;
  Clock store_clock_;
  std::vector<std::vector<ClockSegment>> node_segments_;
  std::vector<ClockSegment> store_segments_;

  std::vector<ReplayFlight> flights_;               // arrived or dropped, in order of arrival
  std::vector<Message> messages_;                   // index: id - 1
  std::map<std::int64_t, std::uint32_t> requests_;  // store request id -> its event
  std::map<ReplyKey, std::deque<std::uint32_t>> store_replies_;
  std::map<SinkKey, std::deque<std::uint32_t>> sink_replies_;
  using SendKey = std::pair<std::int32_t, std::int64_t>;  // writer, payload
  std::map<SendKey, std::deque<std::uint32_t>> sink_sends_;
  std::uint64_t requests_lost_before_ = 0;  // replies forgotten when their node crashed
};

// The page. `timeline_svg` (may be empty: then the page shows no picture) is embedded inline and
// a cursor follows the replay over it. The picture maps true time to x by the root <svg>'s
// attributes data-time-left and data-time-right (x of time 0 and of the domain's end, in viewBox
// units) and data-time-domain-ns (drawing/timeline_svg.hpp); without them its whole width spans
// the run. Deterministic: the same inputs give the same bytes.
std::string render_replay_html(const ReplayRecorder& recorder, const analysis::Report& report,
                               const analysis::Verdict& verdict, const analysis::RunInfo& info,
                               const std::string& timeline_svg);

}  // namespace electsim::drawing
