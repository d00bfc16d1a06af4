// status.hpp: the result of a writer-side classifier or registry call.
#pragma once

#include <string>
#include <utility>

namespace ovscls {

// ok() or an error with a message an operator can act on.
class Status {
  public:
    static Status ok() { return Status(); }
    static Status error(std::string message) { return Status(std::move(message)); }

    bool is_ok() const { return message_.empty(); }
    explicit operator bool() const { return is_ok(); }
    const std::string& message() const { return message_; }

  private:
    Status() = default;
    explicit Status(std::string message)
        : message_(message.empty() ? "error" : std::move(message)) {}
    std::string message_;
};

}  // namespace ovscls
