/* tests/models/test_xgb.c - the xgb cost model (plugins/models/xgb), loaded
 * through the host as the engine loads it.
 *
 * Accuracy: a smooth nonlinear function is learned (held-out R^2), the
 * recorded gemm log is ranked far better than chance, importance finds the
 * features the target depends on.  Files: save/load round trips exactly,
 * wrong files are refused with a message naming the problem and leave the
 * model unchanged.  Pre-trained mode: a fit after load keeps the loaded
 * knowledge.  Edges: bad parameters, predict before fit, one or two rows.
 */
#define MODEL_NAME "xgb"
#include "model_fixtures.h"

#define D 6

/* Smooth and nonlinear, with an interaction; features 4 and 5 are noise
 * the trees must learn to ignore.  (Held-out R^2 measured 0.943.) */
static double smooth(const double *x) {
  return sin(3.0 * x[0]) + 2.0 * (x[1] - 0.5) * (x[1] - 0.5) + x[2] * x[3];
}

/* Depends on features 0 and 2 only. */
static double two_features(const double *x) {
  return sin(4.0 * x[0]) + 2.0 * x[2];
}

/* What the continuation test's new data follow: the same function, moved. */
static double shifted(const double *x) { return smooth(x) + 0.5; }

TEST(learns_smooth_function_with_high_held_out_r2) {
  fx_check_held_out_r2(D, smooth, 0.02, 0.9);
}

/* Measured on the log (train on the first 144 trials, predict the last
 * 96): Spearman 0.615 and 8 of the 10 best predicted in the true top 20
 * with objective=reg, 0.660 and 5 with objective=rank (XGBoost 1.7.4).
 * A random order gives Spearman ~0 (sd 0.10 for 96 rows) and
 * 10 * 20 / 96 ~ 2.1 hits; the bounds leave room for another XGBoost
 * version or CPU rounding differently. */
TEST(ranks_recorded_gemm_log_far_better_than_random) {
  const char *objectives[] = {"objective=reg", "objective=rank"};
  for (int o = 0; o < 2 && !heron_test_failed; o++)
    fx_check_rank_log(objectives[o], 0.45, 4);
}

TEST(importance_ranks_the_features_the_target_depends_on_first) {
  const char *kinds[] = {"importance=gain", "importance=weight"};
  fx_data s = fx_make(400, D, two_features, 0.01, 3);
  for (int k = 0; k < 2; k++) {
    heron_error err;
    heron_model *m = NULL;
    CHECK_OK(fx_open(&m, D, &err, kinds[k], NULL), &err);
    CHECK_OK(heron__model_fit(m, s.X, s.y, s.n, D, &err), &err);
    double scores[D];
    CHECK_OK(heron_model_importance(m, scores, D, &err), &err);
    heron__model_close(m);
    int first, second;
    fx_top2(scores, D, &first, &second);
    fprintf(stderr, "%s: %g %g %g %g %g %g\n", kinds[k], scores[0], scores[1],
            scores[2], scores[3], scores[4], scores[5]);
    CHECK_MSG((first == 0 && second == 2) || (first == 2 && second == 0),
              "%s: top two are %d and %d", kinds[k], first, second);
  }
  fx_free(&s);
}

TEST(importance_of_a_feature_never_split_on_is_zero) {
  heron_error err;
  heron_model *m = NULL;
  CHECK_OK(fx_open(&m, D, &err, NULL), &err);
  /* Feature 5 is constant, so no tree can split on it. */
  fx_data s = fx_make(200, D, two_features, 0.0, 4);
  for (int i = 0; i < s.n; i++)
    s.X[(size_t)i * D + 5] = 1.0;
  CHECK_OK(heron__model_fit(m, s.X, s.y, s.n, D, &err), &err);
  double scores[D];
  CHECK_OK(heron_model_importance(m, scores, D, &err), &err);
  CHECK(scores[5] == 0.0);
  CHECK(scores[0] > 0.0 && scores[2] > 0.0);
  fx_free(&s);
  heron__model_close(m);
}

TEST(saved_model_loads_into_fresh_instance_with_identical_predictions) {
  const fx_round_trip t = {.d = D,
                           .f = smooth,
                           .ntrain = 300,
                           .noise = 0.02,
                           .train_seed = 5,
                           .test_seed = 6,
                           .importance_tol = 1e-6};
  fx_check_round_trip(&t);
}

/* A header announcing an xgb model whose payload is not a booster. */
static void payload_not_a_booster(heron_model *m, const fx_data *probe,
                                  char *good, size_t n) {
  (void)good;
  (void)n;
  const char *bad = fx_path("bad.model");
  const char hdr[] = "heron-model 1\nmodel xgb\nnfeatures 6\nobjective reg\n"
                     "payload 8\nnonsense";
  fx_write(bad, hdr, sizeof hdr - 1);
  CHECK(fx_load_fails(m, probe, bad, HERON_EPARSE, "not an XGBoost model"));
}

TEST(load_rejects_wrong_files_by_name_and_keeps_the_model) {
  static const char garbage[] = "\x89PNG\r\n\x1a\n not a model at all";
  static const char linear[] =
      "heron-model 1\nmodel linear\nnfeatures 6\npayload 0\n";
  const fx_wrong_files w = {.d = D,
                            .f = smooth,
                            .fit_seed = 8,
                            .saved_seed = 7,
                            .garbage = garbage,
                            .garbage_len = sizeof garbage - 1,
                            .other = linear,
                            .other_len = sizeof linear - 1,
                            .other_needle = "'linear' model, not",
                            .cut = 10,
                            .min_size = 100,
                            .more = payload_not_a_booster};
  fx_check_wrong_files(&w);
}

TEST(bad_parameters_are_rejected_by_name) {
  static const fx_bad_param cases[] = {
      {"objective=foo", "objective = 'foo' is not one of reg|rank"},
      {"max_depth=0", "max_depth"},
      {"eta=-1", "eta"},
      {"rounds=0", "rounds"},
      {"gamma=-1", "gamma"},
      {"min_child_weight=x", "min_child_weight"},
      {"tree_method=approx", "tree_method = 'approx' is not one of hist|exact"},
      {"importance=cover", "importance = 'cover' is not one of gain|weight"},
      {"nthread=-2", "nthread"},
      {"seed=-1", "seed"},
      {"depth=3", "depth"}, /* unknown key: refused by the host */
  };
  fx_check_bad_params(D, cases, (int)(sizeof cases / sizeof cases[0]));
}

/* The pre-trained model knows smooth() from plenty of data; the new task
 * has a handful of rows of the shifted function. */
TEST(fit_after_load_continues_from_the_loaded_booster) {
  const fx_continuation c = {.d = D,
                             .base_fn = smooth,
                             .new_fn = shifted,
                             .base_noise = 0.02,
                             .base_seed = 9,
                             .nfew = 8,
                             .few_seed = 10,
                             .test_seed = 11,
                             .min_moved = 0.2,
                             .min_r = 0.9,
                             .refit_same = 0};
  fx_check_continuation(&c);
}

TEST(predict_and_importance_before_fit_are_unsupported) {
  fx_check_untrained(D);
}

TEST(fits_one_and_two_rows) {
  for (int n = 1; n <= 2; n++) {
    heron_error err;
    heron_model *m = NULL;
    CHECK_OK(fx_open(&m, D, &err, NULL), &err);
    fx_data s = fx_make(n, D, smooth, 0.0, 12);
    CHECK_OK(heron__model_fit(m, s.X, s.y, n, D, &err), &err);
    double out[2], scores[D];
    CHECK_OK(heron_model_predict(m, s.X, n, D, out, &err), &err);
    for (int i = 0; i < n; i++)
      CHECK_MSG(isfinite(out[i]) && fabs(out[i] - s.y[i]) < 0.5,
                "n=%d row %d: %g vs %g", n, i, out[i], s.y[i]);
    CHECK_OK(heron_model_importance(m, scores, D, &err), &err);
    fx_free(&s);
    heron__model_close(m);
  }
}

TEST(rank_objective_fits_one_row_and_orders_rows) {
  heron_error err;
  heron_model *m = NULL;
  CHECK_OK(fx_open(&m, D, &err, "objective=rank", NULL), &err);
  fx_data one = fx_make(1, D, smooth, 0.0, 13);
  CHECK_OK(heron__model_fit(m, one.X, one.y, 1, D, &err), &err);
  fx_data train = fx_make(300, D, smooth, 0.0, 14);
  fx_data test = fx_make(200, D, smooth, 0.0, 15);
  CHECK_OK(heron__model_fit(m, train.X, train.y, train.n, D, &err), &err);
  double *pred = fx_predict_all(m, &test);
  CHECK(pred);
  double rho = fx_spearman(test.y, pred, test.n);
  CHECK_MSG(rho > 0.85, "Spearman %.3f", rho);
  free(pred);
  fx_free(&one);
  fx_free(&train);
  fx_free(&test);
  heron__model_close(m);
}

TEST(failed_fit_keeps_the_previous_model) {
  const fx_bad_row b = {.d = D,
                        .f = smooth,
                        .seed = 16,
                        .row = 3,
                        .col = -1,
                        .value = NAN,
                        .needle = "y[3]"};
  fx_check_failed_fit(&b);
}
