/*
 * fit.c - the one least-squares line of the library (timeline slopes, the
 * growth ranking of the HTML report, the "growing" verdict).
 *
 * Two passes over the points (means first, then the centred sums): the
 * one-pass formula loses every digit of a slope of a few bytes on series of
 * gigabytes.
 */
#include "core.h"

void
hscope__fit_line(const double *x, const double *y, size_t n, hscope__fit *out)
{
    double mx = 0, my = 0;
    out->slope = 0;
    out->r2 = 0;
    out->mean = 0;
    out->ok = 0;
    if (!n)
        return;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    out->mean = my;
    out->ok = sxx > 0;
    out->slope = sxx > 0 ? sxy / sxx : 0;
    /* a constant series has nothing to explain: R^2 0 (SQL's regr_r2 says 1) */
    out->r2 = sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
    if (out->r2 > 1)
        out->r2 = 1;
}
