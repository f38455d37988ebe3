/* heron/heron.h - umbrella header of libheron, the Heron-C tensor-kernel
 * auto-tuner.  Plugins may include just the headers they need. */
#ifndef HERON_HERON_H
#define HERON_HERON_H

#define HERON_VERSION_MAJOR 0
#define HERON_VERSION_MINOR 1
#define HERON_VERSION_STRING "0.1.0"

#include "heron/model.h"
#include "heron/param.h"
#include "heron/record.h"
#include "heron/rng.h"
#include "heron/space.h"
#include "heron/status.h"
#include "heron/strategy.h"
#include "heron/task.h"
#include "heron/tune.h"

#endif /* HERON_HERON_H */
