/* The emulated side of SWIN_LAUNCH (swin_launch.h):
 *
 *   SWIN_LAUNCH(k, grid, block, smem, stream)(args...)
 *     -> cuemu::make_launcher(k, "k", grid, block, smem, stream)(args...)
 *
 * The launcher converts the arguments to the kernel's parameter types, keeps one copy of
 * them for the whole grid (each thread's call copies them again, as kernel parameters
 * are per-thread values), and hands the grid to cuemu_launch, which validates the
 * configuration and records errors for cudaGetLastError. */
#ifndef CUEMU_LAUNCH_H
#define CUEMU_LAUNCH_H

#include <tuple>
#include <type_traits>
#include <utility>

namespace cuemu {
template <typename... P> class launcher {
public:
    launcher(void (*k)(P...), const char *name, dim3 grid, dim3 block, size_t smem,
             cudaStream_t stream)
        : k_(k), name_(name), grid_(grid), block_(block), smem_(smem), stream_(stream)
    {
    }

    template <typename... A> void operator()(A &&...a) const
    {
        static_assert(sizeof...(A) == sizeof...(P), "SWIN_LAUNCH: wrong number of kernel arguments");
        call c{k_, std::tuple<std::decay_t<P>...>(static_cast<std::decay_t<P>>(std::forward<A>(a))...)};
        cuemu_launch_desc d{};
        d.kernel = reinterpret_cast<const void *>(k_);
        d.name = name_;
        d.grid = grid_;
        d.block = block_;
        d.smem = smem_;
        d.stream = stream_;
        d.body = &run;
        d.ctx = &c;
        cuemu_launch(&d);
    }

private:
    struct call {
        void (*k)(P...);
        std::tuple<std::decay_t<P>...> args;
    };
    static void run(void *ctx)
    {
        const call *c = static_cast<const call *>(ctx);
        std::apply(c->k, c->args);
    }

    void (*k_)(P...);
    const char *name_;
    dim3 grid_, block_;
    size_t smem_;
    cudaStream_t stream_;
};

template <typename... P>
launcher<P...> make_launcher(void (*k)(P...), const char *name, dim3 grid, dim3 block,
                             size_t smem = 0, cudaStream_t stream = 0)
{
    return launcher<P...>(k, name, grid, block, smem, stream);
}
} // namespace cuemu

#endif
