#!/usr/bin/perl
# Smoke test of one event-loop adapter outside a real manager (label
# "daemons"; also run by the sanitizer builds): a notify socket of our own
# stands in for systemd, with WATCHDOG_USEC=600000 (a pet every 100 ms).
#   adapter-smoke.pl <adapter binary>
# Checks: --help/--version/bad usage; unsupervised run stopped by SIGTERM;
# supervised: READY=1, keepalives at the pet rate, STATUS=, then SIGTERM:
# STOPPING=1 and exit 0 within 1 s; the wedge switch stops the keepalives.
use strict;
use warnings;
use File::Temp qw(tempdir);
use IO::Socket::UNIX;
use POSIX qw(WNOHANG);
use Socket qw(SOCK_DGRAM);
use Time::HiRes qw(time sleep);

my $bin = shift // die "usage: $0 <adapter binary>\n";
# The stop time is the daemon's: not ThreadSanitizer's one-second sleep at
# exit while threads remain (its reports still fail the run).
$ENV{TSAN_OPTIONS} = join(':', grep { length } $ENV{TSAN_OPTIONS} // '', 'atexit_sleep_ms=0');
my $dir = tempdir(CLEANUP => 1);
my $failed = 0;
sub check { my ($ok, $what) = @_; printf "%s: %s\n", $ok ? 'ok' : 'FAIL', $what; $failed++ unless $ok; }

sub run_status { my $out = qx(@_ 2>&1); return ($? >> 8, $out); }
my ($rc, $out) = run_status($bin, '--help');
check($rc == 0 && $out =~ /SDLIVE_WEDGE_FILE/, "--help exits 0 and documents the wedge switch");
($rc) = run_status($bin, '--version');
check($rc == 0, "--version exits 0");
($rc) = run_status($bin, '--no-such-option');
check($rc == 2, "an unknown option exits 2 (got $rc)");
($rc) = run_status($bin, 'operand');
check($rc == 2, "an operand exits 2 (got $rc)");

# start(%env): the adapter's pid, its stderr into $dir/log.
sub start {
        my %env = @_;
        my $pid = fork() // die "fork: $!\n";
        if ($pid == 0) {
                delete @ENV{qw(NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID SDLIVE_WEDGE_FILE SDLIVE_HANG_EXECUTOR_FILE)};
                @ENV{ keys %env } = values %env;
                $ENV{WATCHDOG_PID} = $$ if $env{WATCHDOG_USEC};
                open(STDERR, '>>', "$dir/log") or die;
                open(STDOUT, '>', '/dev/null') or die;
                exec($bin) or die "exec $bin: $!\n";
        }
        return $pid;
}

# stop($pid): SIGTERM; (exit status, ms to exit), or (undef) after 5 s.
sub stop {
        my ($pid) = @_;
        my $t0 = time;
        kill 'TERM', $pid;
        while (time - $t0 < 5) {
                return ($? >> 8, ($? & 127), int((time - $t0) * 1000)) if waitpid($pid, WNOHANG) == $pid;
                sleep 0.01;
        }
        kill 'KILL', $pid;
        waitpid($pid, 0);
        return (undef);
}

my $pid = start();
sleep 0.5;
my ($status, $signal, $ms) = stop($pid);
check(defined $status && $status == 0 && $signal == 0, "unsupervised: SIGTERM ends it with status 0");

my $sock_path = "$dir/notify";
my $sock = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $sock_path) or die "notify socket: $!\n";
# messages($seconds): the notify messages received within that time.
sub messages {
        my ($seconds) = @_;
        my @got;
        my $end = time + $seconds;
        while ((my $left = $end - time) > 0) {
                my $rin = '';
                vec($rin, fileno($sock), 1) = 1;
                next unless select(my $rout = $rin, undef, undef, $left) > 0;
                $sock->recv(my $msg, 4096);
                push @got, split /\n/, $msg;
        }
        return @got;
}

my $wedge = "$dir/wedge";
$pid = start(NOTIFY_SOCKET => $sock_path, WATCHDOG_USEC => 600000, SDLIVE_WEDGE_FILE => $wedge);
my @got = messages(1.5);
my $pets = grep { $_ eq 'WATCHDOG=1' } @got;
check((grep { $_ eq 'READY=1' } @got) == 1, "READY=1 once");
check($pets >= 8 && $pets <= 17, "keepalives at the pet rate: $pets in 1.5 s (expected about 15)");
check((grep { /^STATUS=.* loop: \d+ ticks/ } @got) >= 1, "STATUS= of the loop");
($status, $signal, $ms) = stop($pid);
@got = messages(0.2);
check((grep { $_ eq 'STOPPING=1' } @got) == 1, "STOPPING=1 on SIGTERM");
check(defined $status && $status == 0 && $signal == 0 && $ms <= 1000,
      "SIGTERM: exit 0 within 1 s (" . ($ms // 'none') . " ms)");

$pid = start(NOTIFY_SOCKET => $sock_path, WATCHDOG_USEC => 600000, SDLIVE_WEDGE_FILE => $wedge);
messages(0.5);
open(my $fh, '>', $wedge) or die;
close($fh);
messages(0.3);
$pets = grep { $_ eq 'WATCHDOG=1' } messages(1.0);
check($pets == 0, "wedged: no keepalive in 1 s (got $pets)");
kill 'KILL', $pid;
waitpid($pid, 0);

if ($failed) {
        system('cat', "$dir/log");
        exit 1;
}
