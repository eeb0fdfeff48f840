// fmt as a library for the WebAssembly build, compiled once from Debian's own fmt headers
// (libfmt-dev ships them with the compiled library only for the native system). Without it,
// every file of the build would compile fmt's implementation again (FMT_HEADER_ONLY), a third
// of each file's time. The implementation's non-template functions come from format-inl.h; the
// templates format.h and core.h declare but do not define are instantiated here for what
// electsim formats.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
