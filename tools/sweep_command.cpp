// `talus sweep`: a table of overrides run as separate `talus run` processes.
//
// Each row becomes a run named by its values ("friction=0.3_restitution=0.5"), written to
// DIR/NAME.h5 with its log DIR/NAME.log. A run that exits 0 leaves DIR/NAME.done; a sweep
// called again skips those, so killing it loses only the runs in progress (they start again;
// one that was stopped by a signal, with its checkpoint, is resumed from it). The runs are
// children of the sweep: a signal to the sweep is passed on to them (they checkpoint), and
// they are told to stop if the sweep dies. At the end DIR/summary.csv has one row per run:
// its values, its status and what `talus info` reports of its trajectory.
#include "tools/sweep_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <toml++/toml.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "io/trajectory_info.hpp"
#include "tools/exit_codes.hpp"

namespace talus {

namespace {

namespace fs = std::filesystem;

struct Row {
    std::vector<std::pair<std::string, std::string>> sets;  ///< key, value as given
    int line = 0;
    std::string name;
};

class TableError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) out.push_back(cell), cell.clear();
        else if (c != '\r') cell += c;
    }
    out.push_back(cell);
    for (std::string& s : out) {
        const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
        s = a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    }
    return out;
}

std::vector<Row> read_csv(const fs::path& path) {
    std::ifstream in(path);
    if (!in) throw TableError(fmt::format("{}: cannot read ({})", path.string(), std::strerror(errno)));
    std::string line;
    std::vector<std::string> keys;
    std::vector<Row> rows;
    for (int n = 1; std::getline(in, line); ++n) {
        if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
        const auto cells = split_csv(line);
        if (keys.empty()) {
            keys = cells;
            for (const std::string& k : keys)
                if (k.empty()) throw TableError(fmt::format("{}:{}: an empty column name", path.string(), n));
            continue;
        }
        if (cells.size() != keys.size())
            throw TableError(fmt::format("{}:{}: {} values for {} columns ({})", path.string(), n,
                                         cells.size(), keys.size(), fmt::join(keys, ", ")));
        Row r;
        r.line = n;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (cells[i].empty())
                throw TableError(fmt::format("{}:{}: {}: no value", path.string(), n, keys[i]));
            r.sets.emplace_back(keys[i], cells[i]);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<Row> read_toml(const fs::path& path) {
    toml::table doc;
    try {
        doc = toml::parse_file(path.string());
    } catch (const toml::parse_error& e) {
        throw TableError(fmt::format("{}:{}: syntax error: {}", path.string(), e.source().begin.line,
                                     e.description()));
    }
    std::vector<Row> rows;
    const toml::array* runs = doc["run"].as_array();
    for (const auto& [k, v] : doc)
        if (k.str() != "run")
            throw TableError(fmt::format("{}:{}: {}: unknown key (a sweep table holds [[run]] tables)",
                                         path.string(), v.source().begin.line, k.str()));
    if (!runs) return rows;
    for (const toml::node& node : *runs) {
        const toml::table* t = node.as_table();
        if (!t) continue;
        Row r;
        r.line = int(t->source().begin.line);
        for (const auto& [k, v] : *t) {
            std::string value;
            if (const auto* s = v.as_string()) value = s->get();
            else if (const auto* i = v.as_integer()) value = std::to_string(i->get());
            else if (const auto* d = v.as_floating_point()) value = fmt::format("{}", d->get());
            else if (const auto* b = v.as_boolean()) value = b->get() ? "true" : "false";
            else {
                throw TableError(fmt::format("{}:{}: {}: a value must be a number, a string or a boolean",
                                             path.string(), v.source().begin.line, k.str()));
            }
            r.sets.emplace_back(std::string(k.str()), value);
        }
        rows.push_back(std::move(r));
    }
    return rows;
}

/// "friction=0.3_radius=0.005": the last part of each key and its value, in file-safe
/// characters; the whole key where two keys of the table end alike.
void name_rows(std::vector<Row>& rows, const fs::path& table) {
    std::map<std::string, std::string> short_of;
    std::map<std::string, int> uses;
    for (const Row& r : rows)
        for (const auto& [k, v] : r.sets) short_of[k] = k.substr(k.rfind('.') + 1);
    for (const auto& [k, s] : short_of) ++uses[s];
    const auto safe = [](std::string s) {
        for (char& c : s)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == '='))
                c = '-';
        return s;
    };
    std::map<std::string, int> seen;
    for (Row& r : rows) {
        std::string name;
        for (const auto& [k, v] : r.sets) {
            const std::string& s = short_of[k];
            name += (name.empty() ? "" : "_") + safe((uses[s] > 1 ? k : s) + "=" + v);
        }
        if (name.empty()) name = "base";
        if (auto it = seen.find(name); it != seen.end())
            throw TableError(fmt::format("{}:{}: the same values as line {}: two runs would be one",
                                         table.string(), r.line, it->second));
        seen[name] = r.line;
        r.name = name;
    }
}

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal.store(sig); }

pid_t launch(const std::vector<std::string>& argv, const fs::path& log) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    // the child: stop (as on SIGTERM: a checkpoint) if the sweep dies
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "talus sweep: cannot start %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
}

std::string csv_cell(const std::string& s) {
    return s.find_first_of(",\"") == std::string::npos ? s : "\"" + s + "\"";
}

}  // namespace

int cmd_sweep(const SweepOptions& o) {
    const fs::path table(o.table);
    std::vector<Row> rows;
    try {
        const std::string ext = table.extension().string();
        if (ext == ".csv") rows = read_csv(table);
        else if (ext == ".toml") rows = read_toml(table);
        else throw TableError(fmt::format("{}: a sweep table is a .csv or a .toml file", table.string()));
        if (rows.empty()) throw TableError(fmt::format("{}: no runs in the table", table.string()));
        name_rows(rows, table);
    } catch (const TableError& e) {
        std::fprintf(stderr, "talus sweep: %s\n", e.what());
        return kExitInvalid;
    }
    // absolute: a run's paths given by --set are relative to its scene file, not to here
    const fs::path dir =
        fs::absolute(o.dir.empty() ? fs::path(table).replace_extension("") : fs::path(o.dir)).lexically_normal();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "talus sweep: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return kExitIo;
    }
    // Every run is checked before any starts: a bad key fails the sweep at once, not hours in.
    for (const Row& r : rows) {
        std::vector<std::string> argv{o.talus, "check", o.scene};
        for (const auto& [k, v] : r.sets) argv.insert(argv.end(), {"--set", k + "=" + v});
        const fs::path log = dir / (r.name + ".check.log");
        const pid_t pid = launch(argv, log);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::ifstream in(log);
            std::stringstream text;
            text << in.rdbuf();
            std::fprintf(stderr, "talus sweep: %s:%d (run %s): the scene does not take these values:\n%s",
                         table.c_str(), r.line, r.name.c_str(), text.str().c_str());
            return WIFEXITED(status) ? WEXITSTATUS(status) : kExitInvalid;
        }
        fs::remove(log, ec);
    }

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);

    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const int jobs = std::max(1, o.jobs);
    const unsigned threads = std::max(1u, cores / unsigned(jobs));
    std::map<pid_t, std::size_t> running;
    std::vector<int> code(rows.size(), -1);  // -1 not run; exit code otherwise
    std::size_t next = 0, skipped = 0;
    int first_failure = 0;
    const auto out_of = [&](const Row& r) { return dir / (r.name + ".h5"); };
    const auto done_of = [&](const Row& r) { return dir / (r.name + ".done"); };
    const auto checkpoint_of = [&](const Row& r) { return dir / (r.name + ".checkpoint.h5"); };
    std::fprintf(stderr, "talus sweep: %zu runs of %s, %d at a time (%u thread%s each) -> %s\n", rows.size(),
                 o.scene.c_str(), jobs, threads, threads == 1 ? "" : "s", dir.c_str());
    while (true) {
        while (g_signal.load() == 0 && running.size() < std::size_t(jobs) && next < rows.size()) {
            const std::size_t i = next++;
            const Row& r = rows[i];
            if (fs::exists(done_of(r))) {
                code[i] = 0;
                ++skipped;
                continue;
            }
            std::vector<std::string> argv{o.talus, "run"};
            const bool resume = fs::exists(checkpoint_of(r)) && fs::exists(out_of(r));
            if (resume) {
                argv.insert(argv.end(), {"--resume", checkpoint_of(r).string()});
            } else {
                argv.insert(argv.end(), {o.scene, "-o", out_of(r).string(), "--force"});
                for (const auto& [k, v] : r.sets) argv.insert(argv.end(), {"--set", k + "=" + v});
                argv.insert(argv.end(), {"--set", "output.checkpoint=" + checkpoint_of(r).string()});
            }
            argv.insert(argv.end(), {"--quiet", "--threads", std::to_string(threads)});
            running[launch(argv, dir / (r.name + ".log"))] = i;
            std::fprintf(stderr, "talus sweep: %s %s\n", resume ? "resumed" : "started", r.name.c_str());
        }
        if (running.empty()) break;
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) {
                for (const auto& [p, i] : running) kill(p, g_signal.load());  // they checkpoint
                continue;
            }
            break;
        }
        const auto it = running.find(pid);
        if (it == running.end()) continue;
        const std::size_t i = it->second;
        running.erase(it);
        code[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const Row& r = rows[i];
        if (code[i] == 0) {
            std::ofstream(done_of(r)) << "0\n";
            fs::remove(checkpoint_of(r), ec);
            std::fprintf(stderr, "talus sweep: finished %s\n", r.name.c_str());
        } else if (g_signal.load() == 0) {
            if (first_failure == 0) first_failure = code[i];
            std::fprintf(stderr, "talus sweep: %s failed with exit %d (see %s)\n", r.name.c_str(), code[i],
                         (dir / (r.name + ".log")).c_str());
        }
    }

    // the summary: the table's values, the status and the trajectory's summary per run
    std::vector<std::string> keys;
    for (const Row& r : rows)
        for (const auto& [k, v] : r.sets)
            if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    const fs::path summary = dir / "summary.csv";
    {
        std::ofstream s(summary.string() + ".tmp");
        s << "run";
        for (const std::string& k : keys) s << "," << csv_cell(k);
        s << ",status,exit,frames,time,steps,converged_share,max_penetration,final_kinetic_energy,trajectory\n";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const Row& r = rows[i];
            s << csv_cell(r.name);
            for (const std::string& k : keys) {
                std::string v;
                for (const auto& [rk, rv] : r.sets)
                    if (rk == k) v = rv;
                s << "," << csv_cell(v);
            }
            const char* status = code[i] == 0 ? "done" : code[i] < 0 ? "not run" : "failed";
            s << "," << status << "," << (code[i] < 0 ? std::string() : std::to_string(code[i]));
            try {
                if (code[i] < 0 || !fs::exists(out_of(r))) throw std::runtime_error("none");
                const TrajectorySummary t = summarize_trajectory(out_of(r));
                const auto num = [](const std::optional<double>& x) {
                    return x ? fmt::format("{:.6g}", *x) : std::string();
                };
                s << "," << t.frames << "," << fmt::format("{:.6g}", t.last_time) << "," << t.last_step << ","
                  << num(t.converged_share()) << "," << num(t.max_penetration) << ","
                  << num(t.final_kinetic_energy);
            } catch (const std::exception&) {
                s << ",,,,,,";
            }
            s << "," << csv_cell(out_of(r).string()) << "\n";
        }
    }
    fs::rename(summary.string() + ".tmp", summary, ec);
    const std::size_t finished = std::size_t(std::count(code.begin(), code.end(), 0));
    std::fprintf(stderr, "talus sweep: %zu of %zu runs done (%zu skipped as done before); summary: %s\n",
                 finished, rows.size(), skipped, summary.c_str());
    if (const int sig = g_signal.load(); sig != 0) return 128 + sig;
    return first_failure;
}

}  // namespace talus
