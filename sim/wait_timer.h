// The wall time a scope took, added to a total: what rnic-sim reports at exit as the time
// simulated time stood still (for a host process, for the link's peer).
#ifndef RNIC_SIM_WAIT_TIMER_H
#define RNIC_SIM_WAIT_TIMER_H

#include <chrono>

class WaitTimer {
public:
	explicit WaitTimer(double &total) : total_(total), t0_(std::chrono::steady_clock::now()) {}
	~WaitTimer() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
	WaitTimer(const WaitTimer &) = delete;
	WaitTimer &operator=(const WaitTimer &) = delete;

private:
	double &total_;
	std::chrono::steady_clock::time_point t0_;
};

#endif
