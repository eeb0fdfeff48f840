// The clients' history of store operations: see analysis/history.hpp.
#include "analysis/history.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "analysis/json_text.hpp"

namespace electsim::analysis {

void HistoryRecorder::on_event(const sim::Event& e) {
  if (e.kind == sim::EventKind::store_request) {
    if (ops_.size() >= max_ops_) {
      overflowed_ = true;
      return;
    }
    HistoryOp op;
    op.client = e.node;
    op.request = e.a;
    op.op = static_cast<sim::StoreOp>(e.code);
    op.key = std::string(e.text);
    op.call = e.time;
    ops_.push_back(std::move(op));
    return;
  }
  if (e.kind != sim::EventKind::store_reply || e.d == 0) return;
  // The newest request of that client with that id: requests come in id order, so search back.
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    if (it->client != e.node || it->request != e.d) continue;
    if (it->ret) return;  // answered already
    it->ret = e.time;
    it->error = static_cast<sim::StoreError>(e.c);
    it->succeeded = e.b != 0;
    it->revision = e.a;
    return;
  }
}

std::string HistoryRecorder::jsonl() const {
  std::string out;
  auto it = std::back_inserter(out);
  for (const HistoryOp& op : ops_) {
    const bool known = op.ret && op.error != sim::StoreError::unavailable;
    fmt::format_to(it, "{{\"client\":{},\"request\":{},\"op\":\"{}\",\"key\":", op.client,
                   op.request, sim::store_op_name(op.op));
    append_json_string(out, op.key);
    fmt::format_to(it, ",\"call_ns\":{}", op.call.ns);
    if (known) {
      fmt::format_to(it,
                     ",\"return_ns\":{},\"outcome\":\"{}\",\"error\":\"{}\",\"succeeded\":{},"
                     "\"revision\":{}}}\n",
                     op.ret->ns, op.error == sim::StoreError::none ? "ok" : "fail",
                     sim::store_error_name(op.error), op.succeeded ? "true" : "false", op.revision);
    } else {
      out += ",\"return_ns\":null,\"outcome\":\"unknown\"}\n";
    }
  }
  return out;
}

}  // namespace electsim::analysis
