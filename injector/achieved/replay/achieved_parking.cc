#include "injector/achieved/replay/achieved_parking.h"

namespace occ::inj {

void AchievedParking::SubscribeCallbacks(CUpti_SubscriberHandle subscriber) {
  ProfilerError error;
  const bool ok = device_->EnableContextCallbacks(subscriber, &error) &&
                  device_->SetLaunchCallbacks(subscriber, /*on=*/true, &error);
  if (!ok) status_.FailWith("error: " + error.Message());
}

}  // namespace occ::inj
