// P ranks as P threads (engine/distributed/local_ranks.hpp). Every collective is two
// barrier phases: each rank posts its part into the shared board, all wait, each reads
// what it needs, all wait again (so no rank posts the next collective's part over one not
// yet read). A failing rank marks the board and leaves; the barrier drops it, and the
// others throw LocalRankFailed when they next wake.
#include "engine/distributed/local_ranks.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <thread>
#include <vector>

namespace talus {
namespace {

struct Board {
    explicit Board(int p) : size(p), sync(p), mail(std::size_t(p) * std::size_t(p)), values(std::size_t(p)) {}
    int size;
    std::barrier<> sync;
    std::atomic<bool> failed{false};
    std::vector<std::string> mail;  // mail[from * size + to]
    std::vector<std::vector<int64_t>> values;
};

class LocalRanks final : public Ranks {
public:
    LocalRanks(Board& board, int rank) : board_(board) {
        rank_ = rank;
        size_ = board.size;
    }
    void max(std::span<int64_t> values) override {
        board_.values[std::size_t(rank_)].assign(values.begin(), values.end());
        wait();
        for (int q = 0; q < size_; ++q) {
            const std::vector<int64_t>& v = board_.values[std::size_t(q)];
            for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::max(values[k], v[k]);
        }
        wait();
    }
    void broadcast(std::string& bytes, int from) override {
        if (rank_ == from) post(from, bytes);
        wait();
        if (rank_ != from) bytes = board_.mail[slot(from, from)];
        wait();
    }
    void exchange(const std::vector<std::string>& outbox, std::vector<std::string>& inbox) override {
        for (int q = 0; q < size_; ++q) post(q, outbox[std::size_t(q)]);
        wait();
        inbox.resize(std::size_t(size_));
        for (int q = 0; q < size_; ++q) inbox[std::size_t(q)] = board_.mail[slot(q, rank_)];
        wait();
    }
    void all_gather(const std::string& mine, std::vector<std::string>& all) override {
        post(rank_, mine);
        wait();
        all.resize(std::size_t(size_));
        for (int q = 0; q < size_; ++q) all[std::size_t(q)] = board_.mail[slot(q, q)];
        wait();
    }

private:
    std::size_t slot(int from, int to) const { return std::size_t(from) * std::size_t(size_) + std::size_t(to); }
    void post(int to, const std::string& bytes) { board_.mail[slot(rank_, to)] = bytes; }
    void wait() {
        if (board_.failed.load()) throw LocalRankFailed();
        board_.sync.arrive_and_wait();
        if (board_.failed.load()) throw LocalRankFailed();
    }
    Board& board_;
};

}  // namespace

void run_local_ranks(int count, const std::function<void(Ranks&)>& body) {
    if (count < 1) throw std::invalid_argument("run_local_ranks: at least one rank");
    Board board(count);
    std::vector<std::exception_ptr> error(static_cast<std::size_t>(count));
    std::vector<std::thread> threads;
    threads.reserve(std::size_t(count));
    for (int r = 0; r < count; ++r) {
        threads.emplace_back([&, r] {
            LocalRanks ranks(board, r);
            try {
                body(ranks);
            } catch (...) {
                error[std::size_t(r)] = std::current_exception();
                board.failed.store(true);
                board.sync.arrive_and_drop();
                return;
            }
        });
    }
    for (std::thread& t : threads) t.join();
    // a rank's own failure before the others' LocalRankFailed
    for (const std::exception_ptr& e : error) {
        if (!e) continue;
        try {
            std::rethrow_exception(e);
        } catch (const LocalRankFailed&) {
            continue;
        }
    }
    for (const std::exception_ptr& e : error)
        if (e) std::rethrow_exception(e);
}

}  // namespace talus
