#!/usr/bin/perl
# SPDX-License-Identifier: MIT
#
# acceptor-inherit.pl ACCEPTOR: hostile descriptors passed to sdlive-acceptor as a
# manager would (LISTEN_FDS, LISTEN_FDNAMES, LISTEN_PID), with a notify
# socket of our own that records what it tells the manager. Only the first
# listening socket named "listen" and the connected unix stream sockets under
# a valid, unused "client-<slot>" name may be taken; every other descriptor is
# refused and its name removed from the store (FDSTOREREMOVE=1); a connection
# taken back is served; a name refused next to a connection taken back has
# that connection stored again. Then: names that do not match the count are
# refused as a whole and the descriptors closed. Exits 0 on success.
use strict;
use warnings;
use Fcntl qw(F_DUPFD F_GETFD);
use IO::Socket::UNIX;
use POSIX qw(dup2 _exit);
use Socket qw(AF_UNIX SOCK_STREAM SOCK_DGRAM PF_UNSPEC);
use File::Temp qw(tempdir);

my $acceptor = shift or die "usage: acceptor-inherit.pl ACCEPTOR\n";
my $dir = tempdir(CLEANUP => 1);
my $failed = 0;
$SIG{PIPE} = 'IGNORE';
sub fail { print STDERR "inherit-test: FAIL: @_\n"; $failed = 1; }

sub pair {
    socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!\n";
    return ($a, $b);
}

# run_acceptor(\@descriptors, $names, $tag): starts the acceptor with the
# descriptors as 3, 4, ... and LISTEN_FDNAMES=$names; returns (pid, notify
# socket, log file).
sub run_acceptor {
    my ($fds, $names, $tag) = @_;
    my $notify_path = "$dir/notify-$tag";
    my $notify = IO::Socket::UNIX->new(Type => SOCK_DGRAM, Local => $notify_path) or die "notify: $!\n";
    my $log = "$dir/log-$tag";
    my $pid = fork() // die "fork: $!\n";
    if ($pid == 0) {
        # Out of the way first, then down to 3, 4, ...
        my @high = map { fcntl($_, F_DUPFD, 100) or _exit(99) } @$fds;
        for my $i (0 .. $#high) { dup2($high[$i], 3 + $i) // _exit(98); }
        POSIX::close($_) for @high;
        open(STDOUT, '>', $log) and open(STDERR, '>&', \*STDOUT) or _exit(97);
        $ENV{LISTEN_PID} = $$;
        $ENV{LISTEN_FDS} = scalar @$fds;
        $ENV{LISTEN_FDNAMES} = $names;
        $ENV{NOTIFY_SOCKET} = $notify_path;
        delete @ENV{qw(WATCHDOG_USEC WATCHDOG_PID RUNTIME_DIRECTORY SDLIVE_WEDGE_FILE SDLIVE_CRASH_FILE)};
        exec { $acceptor } $acceptor, '--socket', "$dir/unused.sock" or _exit(96);
    }
    return ($pid, $notify, $log);
}

# Datagrams until READY=1 (5 s at most) and 300 ms more, joined.
sub messages_until_ready {
    my ($notify) = @_;
    my ($all, $rin, $wait) = ('', '', 5);
    vec($rin, fileno($notify), 1) = 1;
    while (select(my $rout = $rin, undef, undef, $wait) > 0) {
        defined(recv($notify, my $msg, 4096, 0)) or last;
        $all .= "$msg\n--\n";
        $wait = 0.3 if $msg =~ /^READY=1$/m;
    }
    return $all;
}

sub ask {
    my ($sock, $line) = @_;
    print $sock "$line\n";
    $sock->flush;
    my $rin = '';
    vec($rin, fileno($sock), 1) = 1;
    return undef unless select(my $rout = $rin, undef, undef, 2) > 0;
    return scalar <$sock>;
}

sub stop {
    my ($pid) = @_;
    kill 'TERM', $pid;
    waitpid($pid, 0);
    return $? >> 8;
}

# --- 1: a mixture of good and hostile descriptors ---------------------------

my $listen = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => "$dir/listen.sock", Listen => 5) or die "listen: $!\n";
my $listen2 = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => "$dir/listen2.sock", Listen => 5) or die "listen2: $!\n";
open(my $file, '<', $0) or die "open: $!\n";
my ($c2, $peer2) = pair();
my ($c2b, $peer2b) = pair();
my ($c64, $peer64) = pair();
my ($c02, $peer02) = pair();
my ($c7, $peer7) = pair();
socketpair(my $dgram, my $dgram_peer, AF_UNIX, SOCK_DGRAM, PF_UNSPEC) or die "socketpair: $!\n";
my ($c9, $peer9) = pair();

my @fds = ($listen, $file, $c2, $c2b, $c64, $c02, $listen2, $dgram, $c7, $c9);
my $names = join(':', 'listen', 'client-1', 'client-2', 'client-2', 'client-64', 'client-02',
                 'listen', 'client-3', 'client-7', '../client-9');
my ($pid, $notify, $log) = run_acceptor(\@fds, $names, 'mixed');
close($_) for @fds;
my $msgs = messages_until_ready($notify);

my %want_removed = map { $_ => 1 } ('client-1', 'client-2', 'client-64', 'client-02', 'listen', 'client-3', '../client-9');
for my $name (sort keys %want_removed) {
    $msgs =~ /FDSTOREREMOVE=1\nFDNAME=\Q$name\E\n--/ or fail "$name was not removed from the store";
}
$msgs =~ /FDSTOREREMOVE=1\nFDNAME=client-7\n/ and fail "client-7, a good connection, was removed from the store";
$msgs =~ /FDSTORE=1\nFDNAME=client-2\n--/ or fail "client-2, taken back, was not stored again after its name was removed";
$msgs =~ /READY=1/ or fail "no READY=1";
open(my $lf, '<', $log) or die;
my $logtext = do { local $/; <$lf> };
$logtext =~ /listening on \Q$dir\E\/listen\.sock \(passed by the manager\); 2 client connections taken back/
    or fail "expected the first listen socket and 2 connections taken back; log:\n$logtext";
for my $why ('not a connected unix stream socket', 'not a client connection name', 'a second descriptor of that name') {
    $logtext =~ /refusing passed descriptor .*: \Q$why\E/ or fail "no refusal for \"$why\"";
}

# The connections taken back are served; the first "listen" accepts.
(ask($peer2, 'ping a.1') // '') eq "pong a.1\n" or fail "client-2 not served";
(ask($peer7, 'ping b.1') // '') eq "pong b.1\n" or fail "client-7 not served";
my $fresh = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => "$dir/listen.sock") or fail "connect: $!";
(ask($fresh, 'ping') // '') eq "pong\n" or fail "the passed listening socket does not serve";
(ask($fresh, 'ping ' . ('x' x 65)) // '') eq "error: unknown request\n" or fail "an over-long token was echoed";
(ask($fresh, 'ping a:b') // '') eq "error: unknown request\n" or fail "a token with ':' was echoed";
# Refused connections were closed by the acceptor: their peers see the end.
for my $p ([$peer64, 'client-64'], [$peer02, 'client-02'], [$peer9, '../client-9']) {
    my $got = ask($p->[0], 'ping');
    defined($got) and fail "$p->[1], refused, still answers: $got";
}
-e "$dir/unused.sock" and fail "it bound --socket although a listening socket was passed";
my $status = stop($pid);
$status == 0 or fail "exit status $status after SIGTERM";
-e "$dir/listen.sock" or fail "it removed the passed socket's file at exit";

# --- 2: names that do not match the count ------------------------------------

my ($d1, $dpeer1) = pair();
($pid, $notify, $log) = run_acceptor([$d1], 'client-1:client-2', 'count');
close($d1);
$msgs = messages_until_ready($notify);
$msgs =~ /READY=1/ or fail "malformed LISTEN_FDNAMES: no READY=1";
defined(ask($dpeer1, 'ping')) and fail "malformed LISTEN_FDNAMES: the descriptor was used";
open($lf, '<', $log) or die;
$logtext = do { local $/; <$lf> };
$logtext =~ /closed 1 passed descriptors: LISTEN_FDNAMES is malformed/ or fail "malformed LISTEN_FDNAMES not reported:\n$logtext";
$logtext =~ /listening on \Q$dir\E\/unused\.sock \(bound here\)/ or fail "without a passed socket it did not bind --socket";
stop($pid);

print "inherit-test: ", ($failed ? "FAILED" : "all hostile descriptors refused, good ones served"), "\n";
exit $failed;
