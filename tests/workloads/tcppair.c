/* tcppair — a TCP server and client on 127.0.0.1 for the ipc tests.
 *
 *   tcppair server PORTFILE N   accept N connections (name "mp_server"): read a
 *                               request, answer 1000 bytes, close; the port is
 *                               written to PORTFILE once listening
 *   tcppair client PORT         connect (name "mp_client"), send 100 bytes,
 *                               read the answer to EOF, close
 * WORKLOAD_CFLAGS: -O2 -g
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char buf[1000];
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(buf, 'x', sizeof(buf));
	if (argc == 4 && strcmp(argv[1], "server") == 0) {
		socklen_t len = sizeof(a);
		int n = atoi(argv[3]), one = 1;
		int ls = socket(AF_INET, SOCK_STREAM, 0);
		prctl(PR_SET_NAME, "mp_server", 0, 0, 0);
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 16) ||
		    getsockname(ls, (struct sockaddr *)&a, &len))
			return perror("server"), 1;
		FILE *f = fopen(argv[2], "w");
		fprintf(f, "%d\n", ntohs(a.sin_port));
		fclose(f);
		for (int i = 0; i < n; i++) {
			int s = accept(ls, NULL, NULL);
			if (s < 0)
				return perror("accept"), 1;
			if (read(s, buf, 100) <= 0 || write(s, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				return perror("serve"), 1;
			close(s);
		}
		close(ls);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "client") == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		prctl(PR_SET_NAME, "mp_client", 0, 0, 0);
		a.sin_port = htons((unsigned short)atoi(argv[2]));
		if (connect(s, (struct sockaddr *)&a, sizeof(a)))
			return perror("connect"), 1;
		if (write(s, buf, 100) != 100)
			return perror("send"), 1;
		while (read(s, buf, sizeof(buf)) > 0)
			;
		close(s);
		return 0;
	}
	fprintf(stderr, "usage: tcppair server PORTFILE N | client PORT\n");
	return 2;
}
