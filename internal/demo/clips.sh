#!/bin/sh
# Makes the demo's two clips (testdata/*.mp4) from ffmpeg's own sources, so
# they look like a recording rather than test bars: a guitarist's take on warm
# moving gradients with a soft melody, and a pitch rehearsal's slides on a
# cool stage light. Ten seconds each, 640×360, a few hundred KB.
#
# Run it from anywhere (`go generate ./internal/demo` does), then refresh
# emulator-data with `go test ./internal/demo -run TestSeed -update`.
# Single-threaded bit-exact encodes give the same bytes on every run with the
# same ffmpeg (Debian bookworm's 5.1) and the DejaVu font.
set -eu
cd "$(dirname "$0")/testdata"

font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
bold=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
[ -r "$font" ] && [ -r "$bold" ] || { echo "clips.sh: needs fonts-dejavu-core" >&2; exit 1; }

# encode OUT VIDEO_GRAPH AUDIO_EXPR: H.264 + AAC, faststart, no varying metadata.
encode() {
	ffmpeg -loglevel error -y -threads 1 \
		-f lavfi -i "$2" \
		-f lavfi -i "aevalsrc=$3:s=44100:d=10" \
		-map 0:v -map 1:a -t 10 \
		-c:v libx264 -preset slow -crf 30 -tune film -pix_fmt yuv420p -x264-params threads=1 \
		-c:a aac -b:a 48k -ac 1 \
		-map_metadata -1 -fflags +bitexact -flags:v +bitexact -flags:a +bitexact \
		-movflags +faststart "$1"
}

# text X Y SIZE FONT TEXT [ENABLE]: one drawtext filter (TEXT must not hold ' or :).
text() {
	printf "drawtext=fontfile=%s:text='%s':x=%s:y=%s:fontsize=%s:fontcolor=white:shadowcolor=black@0.6:shadowx=2:shadowy=2%s" \
		"$4" "$5" "$1" "$2" "$3" "${6:+:enable='$6'}"
}

# Autumn Leaves: amber gradients drifting, a title, a recording timecode; a
# plucked line in A minor (one note every half second, decaying).
notes="220*pow(2\\,(3*eq(mod(floor(2*t)\\,8)\\,1)+5*eq(mod(floor(2*t)\\,8)\\,2)+7*eq(mod(floor(2*t)\\,8)\\,3)+10*eq(mod(floor(2*t)\\,8)\\,4)+7*eq(mod(floor(2*t)\\,8)\\,5)+5*eq(mod(floor(2*t)\\,8)\\,6)+12*eq(mod(floor(2*t)\\,8)\\,7))/12)"
encode autumn-leaves-solo.mp4 \
	"gradients=s=640x360:r=24:c0=0x2a1005:c1=0x8a3b12:c2=0xd9822b:c3=0x3d1a0a:n=4:speed=0.015:seed=7,
	vignette=PI/4,
	$(text 32 28 30 "$bold" 'Autumn Leaves'),
	$(text 32 66 18 "$font" 'Solo, second chorus - take 1'),
	$(text w-tw-28 h-th-24 18 "$font" '%{pts\:hms}'),
	drawbox=x=32:y=ih-44:w=12:h=12:color=red@0.9:t=fill:enable='lt(mod(t\\,1)\\,0.5)',
	$(text 52 h-46 16 "$font" 'REC')" \
	"0.35*sin(2*PI*t*$notes)*exp(-4*mod(t\\,0.5))"

# Seed pitch: three slides of a rehearsal on a cool stage gradient, a
# low hum of room tone.
encode seed-pitch.mp4 \
	"gradients=s=640x360:r=24:c0=0x0b1d3a:c1=0x1f5f8b:c2=0x3aa6a0:c3=0x0a1226:n=4:speed=0.01:seed=3,
	vignette=PI/5,
	drawbox=x=0:y=ih-96:w=iw:h=96:color=black@0.55:t=fill,
	$(text 32 h-82 28 "$bold" 'Demo day pitch' 'lt(t,3.5)'),
	$(text 32 h-44 18 "$font" 'Rehearsal 3 - opening hook' 'lt(t,3.5)'),
	$(text 32 h-82 28 "$bold" 'The problem' 'between(t,3.5,7)'),
	$(text 32 h-44 18 "$font" 'Teams lose two days a week to feedback loops' 'between(t,3.5,7)'),
	$(text 32 h-82 28 "$bold" 'Our traction' 'gte(t,7)'),
	$(text 32 h-44 18 "$font" '40 pilot customers, 3x growth since June' 'gte(t,7)'),
	$(text w-tw-28 24 16 "$font" '%{pts\:hms}')" \
	"0.04*sin(2*PI*110*t)+0.02*sin(2*PI*167*t)"

ls -l autumn-leaves-solo.mp4 seed-pitch.mp4
