// A fixture for the `layers-catches-upward-include` test: an io/ header reaching up into runtime/.
#pragma once

#include "src/runtime/model.h"
