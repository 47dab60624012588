// Peer driver (ours, not SchedCAT's): reads task sets, one per line,
//   m  C_1 D_1 T_1 S_1  C_2 D_2 T_2 S_2 ...
// runs SchedCAT's LAGedf on each, prints one verdict (1/0) per line, then
// "cpu_us_total <x>" (process CPU time spent inside the tests only, parsing excluded).
#include <cstdio>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tasks.h"
#include "schedulability.h"
#include "edf/la.h"

static double cpu_now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main() {
    std::string line;
    std::vector<std::pair<unsigned, TaskSet>> sets;
    while (std::getline(std::cin, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        unsigned m;
        in >> m;
        TaskSet ts;
        unsigned long c, d, t, s;
        while (in >> c >> d >> t >> s) ts.add_task(c, t, d, 0, s, 0);
        sets.emplace_back(m, ts);
    }
    double total = 0;
    std::string out;
    for (auto &p : sets) {
        LAGedf test(p.first);
        double t0 = cpu_now();
        bool ok = test.is_schedulable(p.second);
        total += cpu_now() - t0;
        out += ok ? "1\n" : "0\n";
    }
    std::fputs(out.c_str(), stdout);
    std::printf("cpu_us_total %.3f\n", total);
    return 0;
}
