% The seed's ConvexDP (Yuan et al. 2016, Algorithm 1), as printed in
% ../shared/seeds/000_6a9a108c1b8147e5.txt §4 with the two "end" lines that
% the text extraction lost restored (closing the if/else and the line
% search), semicolons added to silence output. Run in Octave 7.3 on Debian's
% OpenBLAS 0.3.21 with: n=256; W=tril(ones(n)); ConvexDP(W)
% producing convexdp_prefix256_octave.log.
function [A,fcurr,histroy] = ConvexDP(W)
n = size(W,2); diagidx = [1:(n+1):(n*n)];
maxiter = 30; maxiterls = 50; maxitercg = 5;
theta = 1e-3; accuracy = 1e-5; beta = 0.5; sigma = 1e-4;
X = eye(n); I = eye(n);
V = W'*W; V = V + theta*mean(diag(V))*I;
A = chol(X); iX = A \ (A' \ I); G = - iX*V*iX;
fcurr = sum(sum(V.*iX)); histroy = [];
for iter= 1:maxiter,
  if(iter==1)
    D = - G; D(diagidx)=0; i=-1;
  else
    Hx = @(S) -iX*S*G - G*S*iX;
    D = zeros(n,n); R = -G - Hx(D); R(diagidx) = 0;
    P = R; rsold = sum(sum(R.*R));
    for i=1:maxitercg,
      Hp=Hx(P); alpha=rsold/sum(sum(P.*Hp));
      D=D+alpha*P; D(diagidx) = 0;
      R=R-alpha*Hp; R(diagidx) = 0;
      rsnew=sum(sum(R.*R)); if rsnew < 1e-10,break;end
      P=R+rsnew/rsold*P; rsold=rsnew;
    end
  end
  delta = sum(sum(D.*G)); Xold = X;
  flast = fcurr; histroy = [histroy;fcurr];
  for j = 1:maxiterls,
    alpha = power(beta,j-1); X = Xold + alpha*D;
    [A,flag]=chol(X);
    if(flag==0),
      iX = A \ (A' \ I); G = - iX*V*iX; fcurr = sum(sum(V.*iX));
      if(fcurr <= flast+alpha*sigma*delta),break;end
    end
  end
  fprintf('iter:%d, fobj:%.6f, opt:%.2e, cg:%d, ls:%d\n', iter,fcurr,norm(D,'fro'),i,j);
  if(i==maxiterls), X = Xold; fcurr = flast; break; end
  if(abs((flast - fcurr)/flast) <= accuracy),break; end
end
A=chol(X);
