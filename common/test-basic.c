/* The basic helpers: growable arrays, whole-file reads, error strings, the
 * wire enums' names and the intrusive FIFO. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc-util.h"
#include "check-run.h"
#include "error-buf.h"
#include "fifo.h"
#include "fileio.h"
#include "macro.h"
#include "memstream-util.h"
#include "wire-names.h"

START_TEST(test_greedy_realloc) {
        _cleanup_free_ int *a = NULL;
        size_t allocated = 0;

        ck_assert_int_eq(GREEDY_REALLOC(a, allocated, 1), 0);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_ge(allocated, 8);
        for (size_t i = 0; i < 1000; i++) {
                ck_assert_int_eq(GREEDY_REALLOC(a, allocated, i + 1), 0);
                ck_assert_uint_ge(allocated, i + 1);
                a[i] = (int) i;
        }
        /* doubling: 1000 elements from 8 need no more than 2 × 1000 */
        ck_assert_uint_le(allocated, 2048);
        for (size_t i = 0; i < 1000; i++)
                ck_assert_int_eq(a[i], (int) i);

        /* room already there: nothing moves */
        int *before = a;
        size_t cap = allocated;
        ck_assert_int_eq(GREEDY_REALLOC(a, allocated, 10), 0);
        ck_assert_ptr_eq(a, before);
        ck_assert_uint_eq(allocated, cap);
}
END_TEST

START_TEST(test_greedy_realloc0) {
        _cleanup_free_ char **a = NULL;
        size_t allocated = 0;

        ck_assert_int_eq(GREEDY_REALLOC0(a, allocated, 3), 0);
        for (size_t i = 0; i < allocated; i++)
                ck_assert_ptr_null(a[i]);
        a[0] = (char *) "kept";
        ck_assert_int_eq(GREEDY_REALLOC0(a, allocated, 100), 0);
        ck_assert_str_eq(a[0], "kept");
        for (size_t i = 1; i < allocated; i++)
                ck_assert_ptr_null(a[i]);
}
END_TEST

START_TEST(test_greedy_realloc_narrow) {
        /* the capacity's own type bounds it */
        _cleanup_free_ uint8_t *a = NULL;
        uint8_t allocated = 0;

        ck_assert_int_eq(GREEDY_REALLOC(a, allocated, 200), 0);
        ck_assert_uint_ge(allocated, 200);
        ck_assert_int_eq(GREEDY_REALLOC(a, allocated, 255), 0);
        ck_assert_uint_eq(allocated, 255);
        ck_assert_int_eq(GREEDY_REALLOC(a, allocated, 256), -ENOMEM);
        ck_assert_uint_eq(allocated, 255);

        _cleanup_free_ uint64_t *huge = NULL;
        size_t n = 0;
        ck_assert_int_eq(GREEDY_REALLOC(huge, n, SIZE_MAX / 4), -ENOMEM);
        ck_assert_ptr_null(huge);
        ck_assert_uint_eq(n, 0);
}
END_TEST

static void write_temp(char path[static 64], const void *data, size_t len) {
        FILE *f;
        int fd;

        strcpy(path, "/tmp/test-basic.XXXXXX");
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        f = fdopen(fd, "w");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, len, f), len);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_read_full_file) {
        char path[64], link_path[80];
        _cleanup_free_ char *big = NULL;
        size_t big_len = 300 * 1000, len = 0;
        char *data = NULL;

        write_temp(path, "abc\0def", 7);
        ck_assert_int_eq(read_full_file(path, 0, 0, &data, &len), 0);
        ck_assert_uint_eq(len, 7);
        ck_assert_mem_eq(data, "abc\0def", 8); /* NUL-terminated too */
        free(data);

        /* the limit: exactly max is fine, one more byte is not */
        ck_assert_int_eq(read_full_file(path, 0, 7, &data, NULL), 0);
        free(data);
        ck_assert_int_eq(read_full_file(path, 0, 6, &data, &len), -EFBIG);

        /* a symbolic link, with and without READ_FILE_NOFOLLOW */
        snprintf(link_path, sizeof(link_path), "%s.link", path);
        ck_assert_int_eq(symlink(path, link_path), 0);
        ck_assert_int_eq(read_full_file(link_path, 0, 0, &data, &len), 0);
        free(data);
        ck_assert_int_eq(read_full_file(link_path, READ_FILE_NOFOLLOW, 0, &data, &len), -ELOOP);
        unlink(link_path);
        unlink(path);

        /* empty, larger than a read chunk, and what is not a regular file */
        write_temp(path, "", 0);
        ck_assert_int_eq(read_full_file(path, READ_FILE_REGULAR, 0, &data, &len), 0);
        ck_assert_uint_eq(len, 0);
        ck_assert_str_eq(data, "");
        free(data);
        unlink(path);

        big = malloc(big_len);
        ck_assert_ptr_nonnull(big);
        for (size_t i = 0; i < big_len; i++)
                big[i] = (char) ('a' + i % 26);
        write_temp(path, big, big_len);
        ck_assert_int_eq(read_full_file(path, 0, 0, &data, &len), 0);
        ck_assert_uint_eq(len, big_len);
        ck_assert_mem_eq(data, big, big_len);
        free(data);
        unlink(path);

        ck_assert_int_eq(read_full_file("/tmp", 0, 0, &data, &len), -EISDIR);
        ck_assert_int_eq(read_full_file("/dev/null", READ_FILE_REGULAR, 0, &data, &len), -EBADF);
        ck_assert_int_eq(read_full_file("/dev/null", 0, 0, &data, &len), 0);
        ck_assert_uint_eq(len, 0);
        free(data);
        ck_assert_int_eq(read_full_file("/nonexistent/file", 0, 0, &data, &len), -ENOENT);
}
END_TEST

START_TEST(test_read_full_file_stdin) {
        int fds[2], saved;
        char *data = NULL;
        size_t len = 0;

        /* "-" is standard input only when asked: a pipe, read to its end */
        ck_assert_int_eq(pipe(fds), 0);
        ck_assert_int_eq(write(fds[1], "line 1\nline 2\n", 14), 14);
        close(fds[1]);
        saved = dup(STDIN_FILENO);
        ck_assert_int_ge(saved, 0);
        ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
        close(fds[0]);
        ck_assert_int_eq(read_full_file("-", READ_FILE_DASH_STDIN, 0, &data, &len), 0);
        ck_assert_int_eq(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
        ck_assert_uint_eq(len, 14);
        ck_assert_str_eq(data, "line 1\nline 2\n");
        free(data);
        ck_assert_int_eq(read_full_file("-", 0, 0, &data, &len), -ENOENT);
}
END_TEST

/* A whole buffer, larger than a pipe or one write takes, and the errors. */
START_TEST(test_write_full) {
        char path[] = "/tmp/test-basic-write.XXXXXX";
        size_t big_len = 300 * 1000, len = 0;
        _cleanup_free_ char *big = malloc(big_len);
        char *data = NULL;
        int fd, fds[2];

        ck_assert_ptr_nonnull(big);
        for (size_t i = 0; i < big_len; i++)
                big[i] = (char) ('a' + i % 26);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_full(fd, big, big_len), 0);
        ck_assert_int_eq(write_full(fd, big, 0), 0);
        close(fd);
        ck_assert_int_eq(read_full_file(path, 0, 0, &data, &len), 0);
        ck_assert_uint_eq(len, big_len);
        ck_assert_mem_eq(data, big, big_len);
        free(data);
        unlink(path);

        /* at an offset: the tail rewritten, the position left where it was */
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_full(fd, big, big_len), 0);
        ck_assert_int_eq(pwrite_full(fd, "ZZZ", 3, (off_t) big_len - 3), 0);
        ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), (off_t) big_len);
        ck_assert_int_eq(pwrite_full(fd, big, big_len, (off_t) big_len), 0);
        close(fd);
        ck_assert_int_eq(read_full_file(path, 0, 0, &data, &len), 0);
        ck_assert_uint_eq(len, 2 * big_len);
        ck_assert_mem_eq(data + big_len - 3, "ZZZ", 3);
        ck_assert_mem_eq(data + big_len, big, big_len);
        free(data);
        unlink(path);
        ck_assert_int_eq(pwrite_full(-1, "x", 1, 0), -EBADF);

        ck_assert_int_eq(write_full(-1, "x", 1), -EBADF);
        /* a pipe nobody reads: EPIPE (SIGPIPE ignored), not a loop */
        signal(SIGPIPE, SIG_IGN);
        ck_assert_int_eq(pipe(fds), 0);
        close(fds[0]);
        ck_assert_int_eq(write_full(fds[1], big, big_len), -EPIPE);
        close(fds[1]);
}
END_TEST

START_TEST(test_error_buf) {
        char err[16] = "untouched";

        ck_assert_int_eq(error_buf_set(err, sizeof(err), -ENOENT, "no %s", "file"), -ENOENT);
        ck_assert_str_eq(err, "no file");
        ck_assert_int_eq(error_buf_invalid(err, sizeof(err), "cores %d out of range", -1), -EINVAL);
        ck_assert_str_eq(err, "cores -1 out of"); /* truncated, terminated */
        /* no buffer: just the error */
        ck_assert_int_eq(error_buf_set(NULL, 0, -EIO, "lost"), -EIO);
        strcpy(err, "kept");
        ck_assert_int_eq(error_buf_invalid(err, 0, "not written"), -EINVAL);
        ck_assert_str_eq(err, "kept");
}
END_TEST

/* The k-th enum of test_wire_names's list, by value. */
static const char *wire_name(size_t k, int v) {
        switch (k) {
        case 0:
                return wire_worker_state_to_string((Spark__WorkerState) v);
        case 1:
                return wire_app_state_to_string((Spark__AppState) v);
        case 2:
                return wire_executor_state_to_string((Spark__ExecutorState) v);
        case 3:
                return wire_job_state_to_string((Spark__JobState) v);
        default:
                return wire_task_status_to_string((Spark__TaskStatus) v);
        }
}

START_TEST(test_wire_names) {
        ck_assert_str_eq(wire_worker_state_to_string(SPARK__WORKER_STATE__WORKER_ALIVE), "alive");
        ck_assert_str_eq(wire_worker_state_to_string(SPARK__WORKER_STATE__WORKER_LOST), "lost");
        ck_assert_str_eq(wire_app_state_to_string(SPARK__APP_STATE__APP_WAITING), "waiting");
        ck_assert_str_eq(wire_app_state_to_string(SPARK__APP_STATE__APP_FAILED), "failed");
        ck_assert_str_eq(wire_executor_state_to_string(SPARK__EXECUTOR_STATE__EXECUTOR_LAUNCHING), "launching");
        ck_assert_str_eq(wire_executor_state_to_string(SPARK__EXECUTOR_STATE__EXECUTOR_LOST), "lost");
        ck_assert_str_eq(wire_job_state_to_string(SPARK__JOB_STATE__JOB_CANCELLED), "cancelled");
        ck_assert_str_eq(wire_task_status_to_string(SPARK__TASK_STATUS__TASK_OK), "ok");

        /* every value the schema defines has a name; zero and values from a
         * newer peer are "unknown" */
        const ProtobufCEnumDescriptor *d[] = {
                &spark__worker_state__descriptor, &spark__app_state__descriptor,
                &spark__executor_state__descriptor, &spark__job_state__descriptor,
                &spark__task_status__descriptor,
        };
        for (size_t k = 0; k < ELEMENTSOF(d); k++) {
                for (unsigned i = 0; i < d[k]->n_values; i++) {
                        int v = d[k]->values[i].value;

                        if (v == 0)
                                ck_assert_str_eq(wire_name(k, v), "unknown");
                        else
                                ck_assert_str_ne(wire_name(k, v), "unknown");
                }
                ck_assert_str_eq(wire_name(k, -1), "unknown");
                ck_assert_str_eq(wire_name(k, 1000), "unknown");
        }

        ck_assert(!wire_job_state_is_final(SPARK__JOB_STATE__JOB_RUNNING));
        ck_assert(wire_job_state_is_final(SPARK__JOB_STATE__JOB_SUCCEEDED));
        ck_assert(wire_job_state_is_final(SPARK__JOB_STATE__JOB_FAILED));
        ck_assert(wire_job_state_is_final(SPARK__JOB_STATE__JOB_CANCELLED));
}
END_TEST

typedef struct FifoItem {
        int value;
        struct FifoItem *next, *other_next;
} FifoItem;

START_TEST(test_fifo) {
        FifoItem items[4] = { { .value = 0 }, { .value = 1 }, { .value = 2 }, { .value = 3 } };
        FifoItem *head = NULL, *tail = NULL, *other_head = NULL, *other_tail = NULL, *i;

        ck_assert_ptr_null(FIFO_POP(head, tail, next));
        for (int k = 0; k < 4; k++)
                FIFO_PUSH(head, tail, next, &items[k]);
        /* the same items on a second queue, through their other link */
        FIFO_PUSH(other_head, other_tail, other_next, &items[3]);
        FIFO_PUSH(other_head, other_tail, other_next, &items[1]);

        ck_assert(FIFO_REMOVE(head, tail, next, &items[3])); /* the tail */
        ck_assert_ptr_eq(tail, &items[2]);
        ck_assert(!FIFO_REMOVE(head, tail, next, &items[3])); /* not there any more */
        ck_assert(FIFO_REMOVE(head, tail, next, &items[0])); /* the head */
        ck_assert_ptr_eq(head, &items[1]);
        FIFO_PUSH(head, tail, next, &items[0]);

        i = FIFO_POP(head, tail, next);
        ck_assert_int_eq(i->value, 1);
        ck_assert_ptr_null(i->next);
        ck_assert_int_eq(FIFO_POP(head, tail, next)->value, 2);
        ck_assert_int_eq(FIFO_POP(head, tail, next)->value, 0);
        ck_assert_ptr_null(FIFO_POP(head, tail, next));
        ck_assert_ptr_null(tail);
        FIFO_PUSH(head, tail, next, &items[2]); /* empty again, and usable */
        ck_assert_ptr_eq(head, &items[2]);
        ck_assert_ptr_eq(tail, &items[2]);

        ck_assert_int_eq(FIFO_POP(other_head, other_tail, other_next)->value, 3);
        ck_assert(FIFO_REMOVE(other_head, other_tail, other_next, &items[1]));
        ck_assert_ptr_null(other_head);
        ck_assert_ptr_null(other_tail);
}
END_TEST

START_TEST(test_memstream) {
        _cleanup_free_ char *text = NULL, *empty = NULL;
        size_t size = 1;

        {
                _cleanup_(memstream_done) MemStream m = {};
                FILE *f = memstream_init(&m);

                ck_assert_ptr_nonnull(f);
                fprintf(f, "%s = %d;", "cores", 4);
                ck_assert_int_eq(memstream_finalize(&m, &text, &size), 0);
                /* handed over: memstream_done() at the end of the block frees nothing */
                ck_assert_ptr_null(m.buf);
                ck_assert_ptr_null(m.f);
        }
        ck_assert_str_eq(text, "cores = 4;");
        ck_assert_uint_eq(size, strlen("cores = 4;"));

        {
                MemStream m;

                ck_assert_ptr_nonnull(memstream_init(&m));
                ck_assert_int_eq(memstream_finalize(&m, &empty, NULL), 0);
        }
        ck_assert_str_eq(empty, "");

        {
                /* given up half way: memstream_done() closes and frees (ASan checks it) */
                _cleanup_(memstream_done) MemStream m = {};

                ck_assert_ptr_nonnull(memstream_init(&m));
                fputs("dropped", m.f);
        }
}
END_TEST

int main(void) {
        const TTest *tests[] = {
                test_greedy_realloc,
                test_greedy_realloc0,
                test_greedy_realloc_narrow,
                test_read_full_file,
                test_read_full_file_stdin,
                test_write_full,
                test_error_buf,
                test_wire_names,
                test_fifo,
                test_memstream,
                NULL,
        };

        return check_run_tests("basic", NULL, tests);
}
