/*
 * Minimal sandbox ("pause") process for the runtime test images.
 *
 * It is the first process of every pod sandbox started by the test
 * containerd: it holds the pod's namespaces open and does nothing else.
 * SIGINT/SIGTERM end it cleanly (exit 0) so a pod stop does not have to
 * escalate to SIGKILL; as PID 1 of the pod it reaps orphaned children.
 *
 * Build: gcc -static -O2 -o pause pause.c
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig)
{
    (void)sig;
    _exit(0);
}

static void on_child(int sig)
{
    int saved = errno;
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    errno = saved;
}

static void install(int sig, void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = (sig == SIGCHLD) ? SA_NOCLDSTOP | SA_RESTART : 0;
    if (sigaction(sig, &sa, NULL) != 0)
        exit(1);
}

int main(void)
{
    install(SIGINT, on_term);
    install(SIGTERM, on_term);
    install(SIGCHLD, on_child);
    for (;;)
        pause();
    return 0;
}
