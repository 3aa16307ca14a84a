#include "util/row_hook.h"

namespace crossdev {
namespace {
RowHook g_row_hook = nullptr;  // test-only (row_hook.h); never set in production
}  // namespace

void set_row_hook(RowHook hook) noexcept { g_row_hook = hook; }
RowHook row_hook() noexcept { return g_row_hook; }

}  // namespace crossdev
