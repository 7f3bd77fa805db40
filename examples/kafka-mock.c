/*
 * kafka-mock: a Kafka cluster of one broker, in this process, for testing
 * the hand-off of a log to Kafka (test-kafka.sh) where Kafka itself cannot
 * run.  It is librdkafka's mock cluster (rdkafka_mock.h), which speaks the
 * Kafka protocol on a real localhost port, so that kcat(1) talks to it as
 * to any broker.
 *
 *   kafka-mock TOPIC...
 *
 * Creates each TOPIC with one partition, prints the bootstrap address
 * ("127.0.0.1:PORT") on a line of its own, and serves until standard input
 * reaches end of file or it gets SIGTERM or SIGINT.  Everything is kept in
 * memory and gone at exit.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/* Standard input's end is the other way to stop: a test that dies leaves
 * no broker behind. */
static void *watch_stdin(void *arg)
{
	char buf[256];

	(void)arg;
	while (read(STDIN_FILENO, buf, sizeof buf) > 0)
		;
	kill(getpid(), SIGTERM);
	return NULL;
}

int main(int argc, char *argv[])
{
	char err[512];
	sigset_t set;
	int sig;

	if (argc < 2) {
		fprintf(stderr, "usage: kafka-mock topic...\n");
		return 2;
	}
	/* Signals are taken synchronously, by sigwait() below: blocked
	 * before any thread starts, so that librdkafka's threads and ours
	 * never take them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	/* The mock cluster lives in a client instance of its own. */
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	if (rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err) != RD_KAFKA_CONF_OK) {
		fprintf(stderr, "kafka-mock: %s\n", err);
		return 1;
	}
	rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
	if (rk == NULL) {
		fprintf(stderr, "kafka-mock: %s\n", err);
		return 1;
	}
	rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
	if (mc == NULL) {
		fprintf(stderr, "kafka-mock: cannot start the mock cluster\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(mc, argv[i], 1, 1);
		if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
			fprintf(stderr, "kafka-mock: %s: %s\n", argv[i], rd_kafka_err2str(e));
			return 1;
		}
	}

	printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
	fflush(stdout);

	pthread_t t;
	pthread_create(&t, NULL, watch_stdin, NULL);
	sigwait(&set, &sig);
	rd_kafka_mock_cluster_destroy(mc);
	rd_kafka_destroy(rk);
	return 0;
}
